/**
 * Keyboard shortcuts of the dashboard: one table, read by the key handler and by the `?` help dialog,
 * so that the help can never list a shortcut that does not exist.
 */
export interface Shortcut {
  keys: string[];
  /** Pressed one after the other (G, then M) rather than together (Ctrl+K). */
  sequence?: boolean;
  description: string;
}

/** `g` then a letter: go to a section (as in GitHub and Gmail). Values are dashboard paths. */
export const GO_TO: Record<string, { path: string; label: string }> = {
  m: { path: '/models', label: 'Models' },
  f: { path: '/sft/new', label: 'Fine-tune' },
  j: { path: '/jobs', label: 'Jobs' },
  p: { path: '/playground', label: 'Playground' },
  e: { path: '/evals', label: 'Evals' },
  s: { path: '/settings/api-keys', label: 'Settings' },
  u: { path: '/settings/usage', label: 'Usage' },
  d: { path: '/docs', label: 'API docs' },
};

export const SHORTCUT_GROUPS: { title: string; shortcuts: Shortcut[] }[] = [
  {
    title: 'Anywhere',
    shortcuts: [
      { keys: ['Mod', 'K'], description: 'Quick switcher: pages, entities, projects, models' },
      { keys: ['?'], description: 'This list of shortcuts' },
      { keys: ['Esc'], description: 'Close a dialog' },
    ],
  },
  {
    title: 'Go to',
    shortcuts: Object.entries(GO_TO).map(([key, { label }]) => ({
      keys: ['G', key.toUpperCase()],
      sequence: true,
      description: label,
    })),
  },
  {
    title: 'Playground',
    shortcuts: [{ keys: ['Mod', 'Enter'], description: 'Send the message' }],
  },
  {
    title: 'Trajectories',
    shortcuts: [
      { keys: ['J'], description: 'Next trajectory' },
      { keys: ['K'], description: 'Previous trajectory' },
      { keys: ['Enter'], description: 'Open or close it' },
    ],
  },
];

/** Where a single-key shortcut must not fire: the user is typing. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!target || typeof (target as HTMLElement).tagName !== 'string') return false;
  const el = target as HTMLElement;
  const tag = el.tagName.toLowerCase();
  if (tag === 'textarea' || tag === 'select' || el.isContentEditable) return true;
  if (tag !== 'input') return false;
  const type = (el as HTMLInputElement).type;
  return !['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'].includes(type);
}

/** Ctrl on Linux and Windows, ⌘ on Apple platforms. */
export function isModKey(event: Pick<KeyboardEvent, 'ctrlKey' | 'metaKey'>, apple: boolean): boolean {
  return apple ? event.metaKey : event.ctrlKey;
}

export function isApplePlatform(platform: string): boolean {
  return /mac|iphone|ipad|ipod/i.test(platform);
}

export interface Command {
  id: string;
  group: string;
  label: string;
  /** Shown after the label, dimmed; also searched. */
  detail?: string;
  href: string;
}

/**
 * Commands whose label or detail contain every word of the query (case-insensitive), best first: a label equal
 * to the query, then one that starts with it, then one that contains it, then the rest; ties keep the given
 * order. Results stay together by group (the list shows one heading per group, and the row order is the
 * keyboard order), groups ordered by their best result: typing a model's exact name puts Models, and that
 * model, first even when a page's name also starts with it.
 */
export function filterCommands(commands: readonly Command[], query: string): Command[] {
  const q = query.trim().toLowerCase();
  if (!q) return groupTogether(commands.map((c, i) => ({ c, i, score: 0 })));
  const words = q.split(/\s+/);
  const scored: Scored[] = [];
  commands.forEach((c, i) => {
    const label = c.label.toLowerCase();
    const text = `${label} ${c.detail?.toLowerCase() ?? ''} ${c.group.toLowerCase()}`;
    if (!words.every((w) => text.includes(w))) return;
    scored.push({ c, i, score: label === q ? 0 : label.startsWith(q) ? 1 : label.includes(q) ? 2 : 3 });
  });
  return groupTogether(scored);
}

interface Scored {
  c: Command;
  i: number;
  score: number;
}

function groupTogether(scored: Scored[]): Command[] {
  const byRank = (a: Scored, b: Scored) => a.score - b.score || a.i - b.i;
  const groups = new Map<string, Scored[]>();
  for (const s of [...scored].sort(byRank)) {
    const group = groups.get(s.c.group);
    if (group) group.push(s);
    else groups.set(s.c.group, [s]);
  }
  // Map keeps insertion order: each group where its best result came.
  return [...groups.values()].flat().map((s) => s.c);
}
