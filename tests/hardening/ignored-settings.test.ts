import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import * as eventsRoute from '@/app/v1/preview/training-jobs/[training_job_id]/events/route';
import * as rlJobsRoute from '@/app/v1/preview/training-jobs/route';
import { trainingHandlers } from '@/lib/jobs/worker/handlers';
import { inProcessProtocol } from '@/tests/support/in-process-protocol';
import { runOneJob } from '@/lib/jobs/worker/runner';
import { call, createModel, createUser } from '../support/helpers';
import { claimOnly } from '../jobs/claim-only';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

/** Settings the built-in engine accepts but does not implement are named in the job's events, not dropped. */
describe('settings accepted and then ignored', () => {
  it('reports kl_penalty_coef > 0 and other ignored RL settings in training_started', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const groups = [
      {
        trajectories: [
          {
            messages_and_choices: [
              { role: 'user', content: 'a' },
              { role: 'assistant', content: 'b' },
            ],
            reward: 1,
          },
          {
            messages_and_choices: [
              { role: 'user', content: 'a' },
              { role: 'assistant', content: 'c' },
            ],
            reward: 0,
          },
        ],
      },
    ];
    const res = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
      key: user.key,
      body: {
        model_id: model.id,
        trajectory_groups: groups,
        experimental_config: {
          learning_rate: 1e-4,
          kl_penalty_coef: 0.1,
          truncated_importance_sampling: 2,
          scale_learning_rate_by_reward_std_dev: true,
          // No effect on the result: not worth a warning.
          plot_tensors: true,
          packed_sequence_length: 2048,
          // Off values of ignored settings change nothing either.
          num_trajectories_learning_rate_multiplier_power: 0,
        },
      },
    });
    expect(res.status).toBe(200);
    await runOneJob(claimOnly(inProcessProtocol(`test:${model.id}`), model.id), trainingHandlers());
    const events = (
      await call(eventsRoute, 'GET', '/x', {
        key: user.key,
        params: { training_job_id: res.body.id },
        query: { limit: 100 },
      })
    ).body.data as { type: string; data: Record<string, number> }[];
    const started = events.find((e) => e.type === 'training_started')!;
    expect(started.data).toEqual({
      num_sequences: expect.any(Number),
      load_seconds: expect.any(Number),
      'ignored/kl_penalty_coef': 0.1,
      'ignored/truncated_importance_sampling': 2,
      'ignored/scale_learning_rate_by_reward_std_dev': 1,
    });
    expect(events.at(-1)!.type).toBe('training_ended');
  }, 120_000);

  it('reports nothing when every setting is honoured', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
      key: user.key,
      body: {
        model_id: model.id,
        trajectory_groups: [],
        experimental_config: { learning_rate: 1e-4, kl_penalty_coef: 0 },
      },
    });
    await runOneJob(claimOnly(inProcessProtocol(`test:${model.id}`), model.id), trainingHandlers());
    const events = (await call(eventsRoute, 'GET', '/x', { key: user.key, params: { training_job_id: res.body.id } }))
      .body.data;
    expect(events[0]).toMatchObject({ type: 'training_started', data: { num_sequences: 0 } });
    // Nothing ignored: only the count and the worker's start-up time (load_seconds).
    expect(Object.keys(events[0].data).sort()).toEqual(['load_seconds', 'num_sequences']);
  }, 120_000);
});
