import { describe, expect, it } from 'vitest';
import { sftEstimate } from './sft-estimate';

describe('sftEstimate', () => {
  it("adds the latest worker's overhead to its measured time per step", () => {
    const timing = {
      base_model: 'tuneboard/tiny-random',
      workers: [
        { worker_id: 'gpu-a', jobs: 2, seconds_per_step: 0.3, overhead_seconds: 2.7 },
        { worker_id: 'gpu-b', jobs: 1, seconds_per_step: 0.1, overhead_seconds: 1 },
      ],
    };
    // The observed job: 50 steps, 17.9 s, where the fixed rate said "about 1 s".
    expect(sftEstimate(timing, 50)?.seconds).toBeCloseTo(17.7, 6);
    expect(sftEstimate(timing, 50)).toMatchObject({ workerId: 'gpu-a', jobs: 2 });
  });
  it('gives no number without a measured job', () => {
    expect(sftEstimate({ base_model: 'x', workers: [] }, 50)).toBeNull();
    expect(sftEstimate(undefined, 50)).toBeNull();
  });
});
