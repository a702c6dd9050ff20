import { describe, expect, it } from 'vitest';
import {
  detectRewardHacking,
  jobOutcome,
  lengthCappedSignals,
  rewardsTie,
  runVerdict,
  signalSplit,
} from './rl-guardrails';

const job = (over: Partial<Parameters<typeof jobOutcome>[0]> = {}) => ({
  type: 'rl' as const,
  status: 'COMPLETED',
  step: 2,
  num_sequences: 0,
  completed_steps: 0,
  ...over,
});

describe('jobOutcome', () => {
  it('flags a completed RL job without a gradient step as "No update", naming the groups', () => {
    const out = jobOutcome(job(), { 'train/num_groups_trainable': 0, 'train/num_groups_submitted': 8 });
    expect(out).toMatchObject({ kind: 'no-update', trainable: 0, submitted: 8 });
    expect(out.kind === 'no-update' && out.label).toBe('No update: 0 of 8 groups had a reward spread');
    const one = jobOutcome(job(), { 'train/num_groups_trainable': 0, 'train/num_groups_submitted': 1 });
    expect(one.kind === 'no-update' && one.label).toBe('No update: the one group had no reward spread');
  });

  it('says so when the job had no groups at all', () => {
    const out = jobOutcome(job(), { 'train/num_groups_trainable': 0, 'train/num_groups_submitted': 0 });
    expect(out.kind === 'no-update' && out.label).toBe('No update: the job had no trajectory groups');
  });

  it('still flags it before the checkpoint metrics have loaded', () => {
    const out = jobOutcome(job(), undefined);
    expect(out.kind === 'no-update' && out.label).toBe('No update: no group had a reward spread');
  });

  it('names missing trainable tokens when groups had a spread but no step ran', () => {
    const out = jobOutcome(job(), { 'train/num_groups_trainable': 2, 'train/num_groups_submitted': 2 });
    expect(out.kind === 'no-update' && out.label).toBe('No update: no trainable tokens');
  });

  it('leaves jobs that trained, SFT jobs and unfinished jobs alone', () => {
    expect(jobOutcome(job({ num_sequences: 3, completed_steps: 3 }), {}).kind).toBe('normal');
    expect(jobOutcome(job({ type: 'sft' }), {}).kind).toBe('normal');
    expect(jobOutcome(job({ status: 'RUNNING' }), {}).kind).toBe('normal');
    expect(jobOutcome(job({ status: 'FAILED' }), {}).kind).toBe('normal');
  });
});

describe('rewardsTie', () => {
  it('is true only for two or more equal rewards', () => {
    expect(rewardsTie([{ reward: 1 }, { reward: 1 }, { reward: 1 }])).toBe(true);
    expect(rewardsTie([{ reward: 1 }, { reward: 0 }])).toBe(false);
    expect(rewardsTie([{ reward: 1 }])).toBe(false);
    expect(rewardsTie([])).toBe(false);
  });
});

const series = (name: string, values: number[]) => ({
  name,
  total_points: values.length,
  points: values.map((v, i) => [i + 1, v] as [number, number]),
});

describe('detectRewardHacking', () => {
  it('finds a logged metric that falls while the reward rises, on the same split', () => {
    const signals = detectRewardHacking([
      series('train/reward', [0.1, 0.2, 0.4, 0.6, 0.8, 0.9]),
      series('train/correct', [0.9, 0.8, 0.6, 0.4, 0.2, 0.1]),
      series('train/loss', [3, 2.5, 2, 1.5, 1, 0.5]),
      series('train/entropy', [3, 2.5, 2, 1.5, 1, 0.5]),
      // The workers' speed fields: the machine's, not the policy's (a faster step is no sign of hacking).
      series('train/step_seconds', [0.06, 0.05, 0.04, 0.03, 0.03, 0.027]),
      series('train/tokens_per_second', [900, 800, 700, 600, 500, 400]),
      series('train/load_seconds', [9, 8, 1, 0.5, 0.1, 0.05]),
    ]);
    expect(signals).toEqual([
      expect.objectContaining({ kind: 'metric-falls', metric: 'train/correct', reward: 'train/reward' }),
    ]);
  });

  it('stays quiet when the reward and the metrics rise together, or the reward falls', () => {
    expect(
      detectRewardHacking([series('train/reward', [0.1, 0.5, 0.9]), series('train/correct', [0.1, 0.5, 0.9])]),
    ).toEqual([]);
    expect(
      detectRewardHacking([series('train/reward', [0.9, 0.5, 0.1]), series('train/correct', [0.9, 0.5, 0.1])]),
    ).toEqual([]);
    // Too short to call a trend.
    expect(detectRewardHacking([series('train/reward', [0, 1]), series('train/correct', [1, 0])])).toEqual([]);
  });

  it('ignores a lower-is-better metric that falls (that is improvement)', () => {
    expect(
      detectRewardHacking([series('train/reward', [0.1, 0.5, 0.9]), series('train/error_rate', [0.9, 0.5, 0.1])]),
    ).toEqual([]);
  });

  it('finds a completion length pinned at its maximum', () => {
    const signals = detectRewardHacking([
      series('train/completion_tokens', [40, 80, 200, 256, 256, 256, 256, 256, 256]),
    ]);
    expect(signals).toEqual([
      expect.objectContaining({ kind: 'length-pinned', metric: 'train/completion_tokens', limit: 256 }),
    ]);
    expect(detectRewardHacking([series('train/completion_tokens', [256, 256, 256])])).toEqual([]);
  });
});

describe('runVerdict', () => {
  const noUpdate = jobOutcome(job(), { 'train/num_groups_trainable': 0, 'train/num_groups_submitted': 8 });
  it('calls a run stalled when its newest RL job made no update, before anything else', () => {
    expect(runVerdict([series('train/reward', [0, 1, 2])], noUpdate, [])).toMatchObject({ kind: 'stalled' });
  });
  it('calls it hacked when a signal was found, else follows the val reward trend', () => {
    const hacked = detectRewardHacking([series('train/reward', [0, 0.5, 1]), series('train/correct', [1, 0.5, 0])]);
    expect(runVerdict([], null, hacked)).toMatchObject({ kind: 'hacked' });
    expect(
      runVerdict([series('train/reward', [1, 0.5, 0]), series('val/reward', [0.1, 0.4, 0.8])], null, []),
    ).toMatchObject({ kind: 'improving', series: 'val/reward' });
    expect(runVerdict([series('train/reward', [0.5, 0.5, 0.5])], null, [])).toMatchObject({ kind: 'flat' });
    expect(runVerdict([], null, [])).toMatchObject({ kind: 'unknown' });
    // SFT: no reward, and a falling loss is progress.
    expect(runVerdict([series('train/loss', [3, 2, 1])], null, [])).toMatchObject({
      kind: 'improving',
      series: 'train/loss',
    });
  });
});

describe('runVerdict on the per-gradient-step training curve (issue 41)', () => {
  const falling = (n: number, from = 2) => Array.from({ length: n }, (_, i) => from - (i * from) / (n + 1));
  const curveOf = (
    loss: number[],
    segments: { job_id: string; first_x: number; last_x: number }[],
    val?: number[],
  ) => ({
    series: [series('loss', loss), ...(val ? [series('val/loss', val)] : [])],
    segments,
  });

  it('reads one SFT job of 50 falling steps as improving, not "Not enough points"', () => {
    // One checkpoint: one per-job mean in the history.
    const history = [series('train/loss', [0.9])];
    const curve = curveOf(falling(50), [{ job_id: 'job-aaaaaaaa', first_x: 1, last_x: 50 }]);
    const v = runVerdict(history, null, [], curve);
    expect(v).toMatchObject({ kind: 'improving', series: 'loss' });
    expect(v.text).toBe('Improving: training loss');
    expect('basis' in v && v.basis).toBe('first vs last third of 50 gradient steps of job job-aaaa');
  });

  it('does not call two SFT jobs "Declining" from two per-job means: it reads the newest job\'s steps', () => {
    // The observed case: per-job means 0.6357 → 0.7939 (the second job's data starts from a higher loss).
    const history = [series('train/loss', [0.6357, 0.7939])];
    const loss = [...falling(20, 1.2), ...falling(30, 1.6)];
    const curve = curveOf(loss, [
      { job_id: 'job-one', first_x: 1, last_x: 20 },
      { job_id: 'job-two', first_x: 21, last_x: 50 },
    ]);
    expect(runVerdict(history, null, [], curve)).toMatchObject({ kind: 'improving', series: 'loss' });
  });

  it('prefers the held-out loss on the curve, and waits for the curve instead of using per-job means', () => {
    const curve = curveOf(falling(10), [{ job_id: 'j', first_x: 1, last_x: 10 }], [1, 1.5, 2]);
    expect(runVerdict([], null, [], curve)).toMatchObject({ kind: 'declining', series: 'val/loss' });
    expect(runVerdict([series('train/loss', [0.6357, 0.7939])], null, [], 'loading')).toMatchObject({
      kind: 'unknown',
    });
    // A job with one step so far: no trend, and still not the per-job means.
    const oneStep = curveOf([0.5], [{ job_id: 'j', first_x: 1, last_x: 1 }]);
    expect(runVerdict([series('train/loss', [0.6357, 0.7939])], null, [], oneStep)).toMatchObject({
      kind: 'unknown',
      text: 'Not enough gradient steps yet to call a trend',
    });
  });

  it('lets "Possible reward hacking" outrank "No update"', () => {
    const noUpdate = jobOutcome(job(), { 'train/num_groups_trainable': 0, 'train/num_groups_submitted': 8 });
    const pinned = [
      {
        kind: 'length-pinned' as const,
        metric: 'train/answer_len',
        limit: 64,
        share: 1,
        steps: [3, 6] as [number, number],
      },
    ];
    expect(runVerdict([], noUpdate, pinned)).toMatchObject({ kind: 'hacked' });
  });
});

describe('lengthCappedSignals (the server counted the completions)', () => {
  it('turns the history length_pinning into a verdict whatever the length metric is named', () => {
    const signals = lengthCappedSignals([
      {
        split: 'train',
        steps: [0, 5],
        length_share_from: 0,
        length_share_to: 0.92,
        tokens_from: 20,
        tokens_to: 64,
        token_max: 64,
      },
    ]);
    expect(signalSplit(signals[0])).toBe('train');
    expect(runVerdict([series('train/reward', [0.32, 0.6, 1])], null, signals)).toEqual({
      kind: 'hacked',
      text: 'Possible reward hacking: 92 % of train completions stop at the token limit',
    });
  });
});
