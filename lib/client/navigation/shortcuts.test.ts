import { describe, expect, it } from 'vitest';
import {
  filterCommands,
  GO_TO,
  isApplePlatform,
  isModKey,
  isTypingTarget,
  SHORTCUT_GROUPS,
  type Command,
} from './shortcuts';

const commands: Command[] = [
  { id: '1', group: 'Pages', label: 'Models', href: '/models' },
  { id: '2', group: 'Pages', label: 'Playground', href: '/playground' },
  { id: '3', group: 'Models', label: 'faq-assistant', detail: 'ada/support-bot', href: '/models/a' },
  { id: '4', group: 'Models', label: 'sst2-models', detail: 'ada/sentiment', href: '/models/b' },
  { id: '5', group: 'Projects', label: 'support-bot', detail: 'ada', href: '/models?project=support-bot' },
];

describe('filterCommands', () => {
  it('keeps everything for an empty query, in order', () => {
    expect(filterCommands(commands, '  ').map((c) => c.id)).toEqual(['1', '2', '3', '4', '5']);
  });

  it('ranks label prefixes first, then labels containing the query, then detail matches', () => {
    expect(filterCommands(commands, 'MODEL').map((c) => c.id)).toEqual(['1', '4', '3']);
    expect(filterCommands(commands, 'support').map((c) => c.id)).toEqual(['5', '3']);
  });

  it('puts an exact label first, with its group', () => {
    const withPlay: Command[] = [...commands, { id: '6', group: 'Models', label: 'play', href: '/models/c' }];
    expect(filterCommands(withPlay, 'Play').map((c) => c.id)).toEqual(['6', '2']);
  });

  it('keeps each group together, groups in the order of their best result', () => {
    const mixed: Command[] = [
      { id: 'p1', group: 'Pages', label: 'Usage', href: '/usage' },
      { id: 'p2', group: 'Pages', label: 'API usage docs', href: '/docs' },
      { id: 'm1', group: 'Models', label: 'usage-model', href: '/models/u' },
      { id: 'e1', group: 'Entities', label: 'team', detail: 'usage', href: '/models' },
    ];
    // By score alone: p1 (exact), m1 (prefix), p2 (contains), e1 (detail), which would show Pages twice.
    expect(filterCommands(mixed, 'usage').map((c) => c.id)).toEqual(['p1', 'p2', 'm1', 'e1']);
    expect(filterCommands(mixed, '').map((c) => c.id)).toEqual(['p1', 'p2', 'm1', 'e1']);
  });

  it('needs every word somewhere in the label, detail or group', () => {
    expect(filterCommands(commands, 'faq support').map((c) => c.id)).toEqual(['3']);
    expect(filterCommands(commands, 'nothing here')).toEqual([]);
  });
});

describe('keyboard helpers', () => {
  it('knows when the user is typing', () => {
    const el = (tagName: string, extra: Record<string, unknown> = {}) =>
      ({ tagName, isContentEditable: false, ...extra }) as unknown as EventTarget;
    expect(isTypingTarget(el('TEXTAREA'))).toBe(true);
    expect(isTypingTarget(el('INPUT', { type: 'text' }))).toBe(true);
    expect(isTypingTarget(el('INPUT', { type: 'checkbox' }))).toBe(false);
    expect(isTypingTarget(el('DIV', { isContentEditable: true }))).toBe(true);
    expect(isTypingTarget(el('BUTTON'))).toBe(false);
    expect(isTypingTarget(null)).toBe(false);
  });

  it('uses ⌘ on Apple platforms and Ctrl elsewhere', () => {
    expect(isApplePlatform('MacIntel')).toBe(true);
    expect(isApplePlatform('Linux x86_64')).toBe(false);
    expect(isModKey({ ctrlKey: true, metaKey: false }, false)).toBe(true);
    expect(isModKey({ ctrlKey: true, metaKey: false }, true)).toBe(false);
    expect(isModKey({ ctrlKey: false, metaKey: true }, true)).toBe(true);
  });

  it('lists every go-to shortcut in the help', () => {
    const goTo = SHORTCUT_GROUPS.find((g) => g.title === 'Go to')!;
    expect(goTo.shortcuts.map((s) => s.keys[1].toLowerCase()).sort()).toEqual(Object.keys(GO_TO).sort());
  });
});
