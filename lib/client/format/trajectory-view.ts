/**
 * Stored trajectories are passed through exactly as clients sent them (docs/contract.md §4.2), so nothing here
 * trusts their shape: every field is read defensively and everything ends up as plain text. The UI
 * renders these strings as text nodes, never as HTML.
 */

export interface DisplayToolCall {
  id: string | null;
  name: string;
  arguments: string;
}

export interface DisplayMessage {
  role: string;
  /** Text as sent; whitespace is meaningful (code, lists) and must be preserved. */
  content: string;
  toolCalls: DisplayToolCall[];
  toolCallId: string | null;
  /** A Choice (the policy's own sampled output) rather than a prompt message. */
  isChoice: boolean;
  hasLogprobs: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? '';
}

/** OpenAI content: a string, null, or parts (`{type:'text', text}`; other parts shown as JSON). */
export function contentText(content: unknown): string {
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : asText(part),
      )
      .join('\n');
  }
  return asText(content);
}

function toolCalls(value: unknown): DisplayToolCall[] {
  if (!Array.isArray(value)) return [];
  return value.map((call) => {
    const c = isRecord(call) ? call : {};
    const fn = isRecord(c.function) ? c.function : {};
    return {
      id: typeof c.id === 'string' ? c.id : null,
      name: typeof fn.name === 'string' ? fn.name : '(unnamed tool)',
      arguments: typeof fn.arguments === 'string' ? fn.arguments : asText(fn.arguments),
    };
  });
}

/** A Choice item carries its message under `message` (with `logprobs` beside it); a plain message does not. */
export function toDisplayMessage(item: unknown): DisplayMessage {
  const raw = isRecord(item) ? item : {};
  const isChoice = isRecord(raw.message);
  const m = isChoice ? (raw.message as Record<string, unknown>) : raw;
  return {
    role: typeof m.role === 'string' ? m.role : isChoice ? 'assistant' : 'unknown',
    content: contentText(m.content),
    toolCalls: toolCalls(m.tool_calls),
    toolCallId: typeof m.tool_call_id === 'string' ? m.tool_call_id : null,
    isChoice,
    hasLogprobs: isChoice && raw.logprobs !== null && raw.logprobs !== undefined,
  };
}

export interface DisplayTrajectory {
  /** Position in its group, 0-based, for labels and keys. */
  index: number;
  reward: number;
  messages: DisplayMessage[];
  metrics: Record<string, string>;
  tools: string[];
}

/** Tool names a trajectory declared (`tools: [{type:'function', function:{name}}]`). */
function toolNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((t) => {
    const fn = isRecord(t) && isRecord(t.function) ? t.function : null;
    return fn && typeof fn.name === 'string' ? fn.name : asText(t);
  });
}

export function toDisplayTrajectory(raw: unknown, index: number): DisplayTrajectory {
  const t = isRecord(raw) ? raw : {};
  const metrics: Record<string, string> = {};
  if (isRecord(t.metrics))
    for (const [k, v] of Object.entries(t.metrics)) metrics[k] = typeof v === 'number' ? formatNumber(v) : asText(v);
  return {
    index,
    // Absent means 0.0, as the API defines it.
    reward: typeof t.reward === 'number' ? t.reward : 0,
    messages: Array.isArray(t.messages_and_choices) ? t.messages_and_choices.map(toDisplayMessage) : [],
    metrics,
    tools: toolNames(t.tools),
  };
}

/** The trajectories of a stored group (`group.trajectories`), or none if the shape is unexpected. */
export function groupTrajectories(group: Record<string, unknown>): DisplayTrajectory[] {
  return Array.isArray(group.trajectories) ? group.trajectories.map(toDisplayTrajectory) : [];
}

export function groupExceptions(group: Record<string, unknown>): string[] {
  return Array.isArray(group.exceptions) ? group.exceptions.map(asText) : [];
}

/** Best and worst by reward; the first one wins a tie so the pair is stable. Null for an empty list. */
export function bestAndWorst<T extends { reward: number }>(items: readonly T[]): { best: T; worst: T } | null {
  if (items.length === 0) return null;
  let best = items[0];
  let worst = items[0];
  for (const item of items) {
    if (item.reward > best.reward) best = item;
    if (item.reward < worst.reward) worst = item;
  }
  return { best, worst };
}

export type RewardSort = 'reward-desc' | 'reward-asc' | 'index';

export function sortByReward<T extends { reward: number; index: number }>(items: readonly T[], sort: RewardSort): T[] {
  const copy = [...items];
  if (sort === 'reward-desc') copy.sort((a, b) => b.reward - a.reward || a.index - b.index);
  else if (sort === 'reward-asc') copy.sort((a, b) => a.reward - b.reward || a.index - b.index);
  else copy.sort((a, b) => a.index - b.index);
  return copy;
}

/** Keeps items whose reward lies within [min, max]; a null bound is open. */
export function filterByReward<T extends { reward: number }>(
  items: readonly T[],
  min: number | null,
  max: number | null,
): T[] {
  return items.filter((t) => (min === null || t.reward >= min) && (max === null || t.reward <= max));
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e9) return value.toLocaleString('en');
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e6)) return value.toExponential(3);
  return value.toLocaleString('en', { maximumFractionDigits: 4 });
}

/**
 * One line to tell rows apart while collapsed: the policy's last answer (else the last message), whitespace
 * collapsed, cut at `max` characters.
 */
export function trajectoryPreview(t: Pick<DisplayTrajectory, 'messages'>, max = 120): string {
  const answer = [...t.messages].reverse().find((m) => m.isChoice || m.role === 'assistant') ?? t.messages.at(-1);
  const text = (answer?.content ?? '').replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Where `reward` sits between the lowest and highest reward on screen, 0–1; 1 when they are all equal. */
export function rewardFraction(reward: number, min: number, max: number): number {
  if (!(max > min)) return 1;
  return Math.min(1, Math.max(0, (reward - min) / (max - min)));
}

/** A reward filter bound: '' is no bound; anything else must be a finite number. */
export function parseRewardBound(text: string): { value: number | null; error: string | null } {
  const trimmed = text.trim();
  if (trimmed === '') return { value: null, error: null };
  const n = Number(trimmed);
  return Number.isFinite(n) ? { value: n, error: null } : { value: null, error: 'Enter a number, e.g. 0.5' };
}

/**
 * What a trajectory was asked: every message before the policy's first answer (a Choice, else the first assistant
 * message), role and text, whitespace collapsed. Rollouts of one prompt, at one step or another, share it.
 */
export function promptKey(t: Pick<DisplayTrajectory, 'messages'>): string {
  const first = t.messages.findIndex((m) => m.isChoice || m.role === 'assistant');
  const asked = first === -1 ? t.messages : t.messages.slice(0, first);
  return asked.map((m) => `${m.role}: ${m.content.replace(/\s+/g, ' ').trim()}`).join('\n');
}

/** Characters the policy wrote: every answer (Choice or assistant message) of the trajectory. */
export function answerLength(t: Pick<DisplayTrajectory, 'messages'>): number {
  return t.messages
    .filter((m) => m.isChoice || m.role === 'assistant')
    .reduce((n, m) => n + m.content.length + m.toolCalls.reduce((k, c) => k + c.arguments.length, 0), 0);
}

export interface PromptSide<T> {
  count: number;
  meanReward: number;
  meanLength: number;
  /** The rollout to show: the highest-rewarded one. */
  sample: T;
}

export interface PromptComparison<T> {
  key: string;
  /** The last message before the answer, for a one-line label. */
  preview: string;
  a: PromptSide<T>;
  b: PromptSide<T>;
  rewardDelta: number;
  lengthDelta: number;
}

/**
 * The prompts rolled out at both of two steps, each side summarised (mean reward and answer length over its
 * rollouts), deltas b − a; the prompts whose reward moved most first.
 */
export function comparePrompts<T extends DisplayTrajectory>(
  atA: readonly T[],
  atB: readonly T[],
): PromptComparison<T>[] {
  const side = (items: readonly T[]) => {
    const by = new Map<string, T[]>();
    for (const t of items) {
      const key = promptKey(t);
      const list = by.get(key);
      if (list) list.push(t);
      else by.set(key, [t]);
    }
    return new Map(
      [...by].map(([key, list]): [string, PromptSide<T>] => [
        key,
        {
          count: list.length,
          meanReward: list.reduce((s, t) => s + t.reward, 0) / list.length,
          meanLength: list.reduce((s, t) => s + answerLength(t), 0) / list.length,
          sample: list.reduce((best, t) => (t.reward > best.reward ? t : best)),
        },
      ]),
    );
  };
  const a = side(atA);
  const b = side(atB);
  const out: PromptComparison<T>[] = [];
  for (const [key, sa] of a) {
    const sb = b.get(key);
    if (!sb) continue;
    const last = key.split('\n').at(-1) ?? '';
    out.push({
      key,
      preview: last.replace(/^[a-z]+: /, ''),
      a: sa,
      b: sb,
      rewardDelta: sb.meanReward - sa.meanReward,
      lengthDelta: sb.meanLength - sa.meanLength,
    });
  }
  return out.sort((x, y) => Math.abs(y.rewardDelta) - Math.abs(x.rewardDelta) || x.key.localeCompare(y.key));
}
