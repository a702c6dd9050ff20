import { describe, expect, it } from 'vitest';
import { runRlLoop } from '@/examples/rl-loop';
import { trainingHandlers } from '@/lib/jobs/worker/handlers';
import { inProcessProtocol } from '@/tests/support/in-process-protocol';
import { runOneJob } from '@/lib/jobs/worker/runner';
import { createUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';
import { claimOnly } from './claim-only';

describe('the example RL loop, as real clients run it', () => {
  it(
    'rolls out, trains, polls events and chats with each new step; the reward goes up',
    { timeout: 300_000 },
    async () => {
      const user = await createUser();
      let modelId: string | null = null;
      const stop = new AbortController();
      // The server's training worker, in-process: claims this test's jobs only.
      const trainer = (async () => {
        while (!stop.signal.aborted) {
          const ran = modelId
            ? await runOneJob(claimOnly(inProcessProtocol(`rl-loop:${modelId}`), modelId), trainingHandlers())
            : false;
          if (!ran) await new Promise((r) => setTimeout(r, 50));
        }
      })();
      try {
        const result = await runRlLoop({
          baseURL: 'http://localhost:3000',
          apiKey: user.key,
          fetch: routeFetch,
          steps: 6,
          groupSize: 8,
          // Seeded rollouts make the run reproducible: the same rewards every time, so this cannot flake.
          seed: 1,
          log: () => undefined,
          onModel: (id) => (modelId = id),
        });
        const first = result.rewards[0];
        const last = result.rewards.at(-1)!;
        console.log(`rl-loop rewards: ${result.rewards.map((r) => r.toFixed(3)).join(' → ')}`);
        expect(last).toBeGreaterThan(first + 0.1);
      } finally {
        stop.abort();
        await trainer;
      }
    },
  );
});
