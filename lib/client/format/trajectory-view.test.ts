import { describe, expect, it } from 'vitest';
import {
  bestAndWorst,
  parseRewardBound,
  rewardFraction,
  trajectoryPreview,
  contentText,
  filterByReward,
  formatNumber,
  groupTrajectories,
  sortByReward,
  toDisplayMessage,
  comparePrompts,
  promptKey,
  toDisplayTrajectory,
} from './trajectory-view';

describe('toDisplayMessage', () => {
  it('reads a plain message with tool calls', () => {
    const m = toDisplayMessage({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }],
    });
    expect(m).toMatchObject({ role: 'assistant', content: '', isChoice: false });
    expect(m.toolCalls).toEqual([{ id: 'c1', name: 'search', arguments: '{"q":"x"}' }]);
  });

  it('reads a Choice through its message key and notes logprobs', () => {
    const m = toDisplayMessage({
      finish_reason: 'stop',
      index: 0,
      logprobs: { content: [] },
      message: { role: 'assistant', content: '  a\n b' },
    });
    expect(m).toMatchObject({ role: 'assistant', content: '  a\n b', isChoice: true, hasLogprobs: true });
  });

  it('keeps markup as text and survives odd shapes', () => {
    expect(toDisplayMessage({ role: 'user', content: '<img src=x onerror=alert(1)>' }).content).toBe(
      '<img src=x onerror=alert(1)>',
    );
    expect(toDisplayMessage('nonsense')).toMatchObject({ role: 'unknown', content: '' });
    expect(toDisplayMessage({ role: 'tool', content: 'r', tool_call_id: 'c1' }).toolCallId).toBe('c1');
  });
});

describe('contentText', () => {
  it('joins text parts and shows other parts as JSON', () => {
    expect(
      contentText([
        { type: 'text', text: 'a' },
        { type: 'image_url', image_url: { url: 'u' } },
      ]),
    ).toContain('"image_url"');
    expect(
      contentText([
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ]),
    ).toBe('a\nb');
  });
});

describe('trajectory lists', () => {
  const group = {
    trajectories: [
      { reward: 0.5, messages_and_choices: [], metrics: { correct: true } },
      { messages_and_choices: [] },
      { reward: 1, messages_and_choices: [], tools: [{ type: 'function', function: { name: 'lookup' } }] },
    ],
  };
  const items = groupTrajectories(group);

  it('defaults a missing reward to 0 and reads tools and metrics', () => {
    expect(items.map((t) => t.reward)).toEqual([0.5, 0, 1]);
    expect(items[2].tools).toEqual(['lookup']);
    expect(items[0].metrics).toEqual({ correct: 'true' });
  });

  it('finds best and worst, sorts and filters by reward', () => {
    expect(bestAndWorst(items)).toEqual({ best: items[2], worst: items[1] });
    expect(bestAndWorst([])).toBeNull();
    expect(sortByReward(items, 'reward-desc').map((t) => t.index)).toEqual([2, 0, 1]);
    expect(sortByReward(items, 'reward-asc').map((t) => t.index)).toEqual([1, 0, 2]);
    expect(filterByReward(items, 0.5, null).map((t) => t.index)).toEqual([0, 2]);
    expect(filterByReward(items, null, 0.4).map((t) => t.index)).toEqual([1]);
  });

  it('formats numbers compactly', () => {
    expect(formatNumber(1234)).toBe('1,234');
    expect(formatNumber(0.123456)).toBe('0.1235');
    expect(formatNumber(0.00001)).toBe('1.000e-5');
  });
});

describe('trajectoryPreview / rewardFraction / parseRewardBound', () => {
  const msg = (role: string, content: string, isChoice = false) => ({
    role,
    content,
    toolCalls: [],
    toolCallId: null,
    isChoice,
    hasLogprobs: false,
  });
  it('previews the last answer on one line, cut with an ellipsis', () => {
    expect(trajectoryPreview({ messages: [msg('user', 'q'), msg('assistant', ' the\n answer ', true)] })).toBe(
      'the answer',
    );
    expect(trajectoryPreview({ messages: [msg('user', 'x'.repeat(200))] }, 10)).toBe(`${'x'.repeat(9)}…`);
    expect(trajectoryPreview({ messages: [] })).toBe('');
  });
  it('places a reward between the extremes, full when all tie', () => {
    expect(rewardFraction(0.5, 0, 1)).toBe(0.5);
    expect(rewardFraction(2, 2, 2)).toBe(1);
  });
  it('accepts blank and finite bounds and names anything else', () => {
    expect(parseRewardBound(' ')).toEqual({ value: null, error: null });
    expect(parseRewardBound('-0.5')).toEqual({ value: -0.5, error: null });
    expect(parseRewardBound('abc').error).toMatch(/number/);
    expect(parseRewardBound('Infinity').error).not.toBeNull();
  });
});

describe('comparePrompts', () => {
  const rollout = (question: string, answer: string, reward: number, index = 0) =>
    toDisplayTrajectory(
      {
        reward,
        messages_and_choices: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: question },
          { finish_reason: 'stop', index: 0, logprobs: null, message: { role: 'assistant', content: answer } },
        ],
      },
      index,
    );

  it('pairs the prompts of two steps, with mean reward and answer length per side and deltas b − a', () => {
    const before = [rollout('2+2?', 'four', 0), rollout('2+2?', 'It is four', 0.5, 1), rollout('Sky?', 'blue', 1)];
    const after = [rollout('2+2?', '4', 1), rollout('2+2?', '4', 1, 1), rollout('Only later?', 'x', 1)];
    const rows = comparePrompts(before, after);
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row.preview).toBe('2+2?');
    expect(row.a).toMatchObject({ count: 2, meanReward: 0.25, meanLength: 7 });
    expect(row.b).toMatchObject({ count: 2, meanReward: 1, meanLength: 1 });
    expect(row.rewardDelta).toBe(0.75);
    expect(row.lengthDelta).toBe(-6);
    // The best rollout of each side is the one shown.
    expect(row.a.sample.messages.at(-1)!.content).toBe('It is four');
  });

  it('keys a prompt by what was asked, whitespace aside, not by the answer', () => {
    expect(promptKey(rollout('a  b', 'one', 0))).toBe(promptKey(rollout('a b', 'two', 1)));
    expect(promptKey(rollout('a b', 'one', 0))).not.toBe(promptKey(rollout('a c', 'one', 0)));
  });

  it('puts the prompts whose reward moved most first', () => {
    const rows = comparePrompts(
      [rollout('p', 'x', 0.5), rollout('q', 'x', 0.5)],
      [rollout('p', 'x', 0.6), rollout('q', 'x', 0)],
    );
    expect(rows.map((r) => r.preview)).toEqual(['q', 'p']);
  });
});
