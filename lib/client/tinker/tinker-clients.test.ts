import { describe, expect, it } from 'vitest';
import { clientStatusView, tinkerRunVerdict } from './tinker-clients';

const client = { status: 'waiting' as const, worker_id: null, waiting_reason: null, error: null };

describe('clientStatusView', () => {
  it('says why a client waits, and who loads or holds one', () => {
    expect(clientStatusView({ ...client, waiting_reason: 'no connected Python worker can train x' })).toEqual({
      label: 'Waiting for a worker',
      tone: 'neutral',
      worker: null,
      note: 'no connected Python worker can train x',
    });
    expect(clientStatusView({ ...client, worker_id: 'box:1' })).toMatchObject({ label: 'Loading', worker: 'box:1' });
    expect(clientStatusView({ ...client, status: 'ready', worker_id: 'box:1' })).toMatchObject({
      label: 'Ready',
      tone: 'info',
      worker: 'box:1',
    });
  });

  it('gives a closed client its reason as a note, and leaves a failure’s error to the error display', () => {
    const reason = 'unloaded by its client (unload_model)';
    expect(clientStatusView({ ...client, status: 'closed', error: reason })).toMatchObject({
      label: 'Closed',
      tone: 'neutral',
      note: reason,
    });
    expect(clientStatusView({ ...client, status: 'failed', error: 'lost' })).toMatchObject({
      label: 'Failed',
      tone: 'danger',
      note: null,
    });
  });
});

describe('tinkerRunVerdict', () => {
  const curve = (name: string, values: number[]) => ({
    name,
    total_points: values.length,
    points: values.map((v, i) => [i + 1, v] as [number, number]),
  });

  it('reads a cross-entropy run’s trend from the loss of every optim step', () => {
    const v = tinkerRunVerdict([], [curve('loss', [3, 2.9, 2.5, 2, 1.5, 1.2]), curve('grad_norm', [1, 1, 1])], []);
    expect(v).toMatchObject({ kind: 'improving', text: 'Improving: mean train loss', series: 'loss' });
  });

  it('makes no claim from an RL loss', () => {
    const v = tinkerRunVerdict([], [curve('loss', [0.1, 0.05, 0, -0.1]), curve('ratio_mean', [1, 1, 1, 1])], []);
    expect(v.kind).toBe('unknown');
    expect(v.text).toMatch(/RL loss/);
  });

  it('ignores the checkpoints’ copies of the last step’s train loss', () => {
    const checkpoints = [curve('train/loss', [1, 5, 9])];
    expect(tinkerRunVerdict(checkpoints, [curve('loss', [2])], [])).toEqual({
      kind: 'unknown',
      text: 'Not enough optim steps yet to call a trend',
    });
  });

  it('prefers a reward or val loss the client logged', () => {
    const v = tinkerRunVerdict([curve('val/reward', [0.1, 0.2, 0.6])], [curve('loss', [3, 1, 0.5])], []);
    expect(v).toMatchObject({ kind: 'improving', text: 'Improving: val/reward' });
  });
});
