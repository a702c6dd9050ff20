import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import * as modelJobsRoute from '@/app/v1/preview/models/[model_id]/training-jobs/route';
import * as trajectoriesRoute from '@/app/v1/preview/models/[model_id]/trajectories/route';
import * as sftJobsRoute from '@/app/v1/preview/sft-training-jobs/route';
import * as jobRoute from '@/app/v1/preview/training-jobs/[training_job_id]/route';
import * as rlJobsRoute from '@/app/v1/preview/training-jobs/route';
import { checkpointListSchema } from '@/lib/schemas/checkpoints';
import {
  jobCreatedSchema,
  RL_DEFAULT_LEARNING_RATE,
  SFT_DEFAULT_LEARNING_RATE,
  trainingJobListSchema,
  trainingJobSchema,
} from '@/lib/schemas/training-jobs';
import { trajectoryGroupListSchema } from '@/lib/schemas/trajectories';
import { storeDataset } from '@/lib/services/datasets';
import {
  call,
  createModel,
  createRlJob,
  createUser,
  principalOf,
  seedCheckpoints,
  uniqueName,
  type TestUser,
} from '../support/helpers';

function postRl(user: TestUser, body: unknown) {
  return call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', { key: user.key, body });
}

function postSft(user: TestUser, body: unknown) {
  return call(sftJobsRoute, 'POST', '/v1/preview/sft-training-jobs', { key: user.key, body });
}

async function getJob(user: TestUser, id: string) {
  return call(jobRoute, 'GET', `/v1/preview/training-jobs/${id}`, { key: user.key, params: { training_job_id: id } });
}

async function readJob(user: TestUser, id: string) {
  const res = await getJob(user, id);
  expect(res.status).toBe(200);
  return trainingJobSchema.parse(res.body);
}

const choice = (text: string) => ({
  finish_reason: 'stop',
  index: 0,
  logprobs: { content: [{ token: 'token_id:72', bytes: [72], logprob: -0.5, top_logprobs: [] }], refusal: null },
  message: { content: text, role: 'assistant', tool_calls: [] },
});
const traj = (reward: number, metrics: Record<string, unknown> = {}) => ({
  messages_and_choices: [{ role: 'user', content: 'Say hi' }, choice('hi')],
  tools: null,
  additional_histories: [],
  reward,
  metrics,
  metadata: {},
  logs: [],
});

/** Dec-2025 ART: every key present, unset ones null, learning_rate always sent (docs/contract.md §3.1). */
const DEC_2025_CONFIG = {
  advantage_balance: null,
  epsilon: null,
  epsilon_high: null,
  importance_sampling_level: null,
  kimi_k2_tau: null,
  learning_rate: 5e-6,
  mask_prob_ratio: null,
  max_negative_advantage_importance_sampling_weight: null,
  ppo: null,
  precalculate_logprobs: null,
  scale_rewards: null,
};

/** 2026+ ART: concrete values, later keys that we ignore (docs/contract.md §3.1). */
const ART_2026_CONFIG = {
  advantage_balance: 0.0,
  epsilon: null,
  epsilon_high: null,
  importance_sampling_level: 'token',
  kimi_k2_tau: null,
  learning_rate: 5e-6,
  mask_prob_ratio: false,
  max_negative_advantage_importance_sampling_weight: null,
  ppo: false,
  precalculate_logprobs: false,
  scale_rewards: true,
  kl_penalty_coef: 0.0,
  kl_ref_adapter_path: null,
  logprob_calculation_chunk_size: 1024,
  packed_sequence_length: null,
  plot_tensors: false,
  scale_learning_rate_by_reward_std_dev: false,
  truncated_importance_sampling: null,
  num_trajectories_learning_rate_multiplier_power: 0.0,
};

describe('POST /v1/preview/training-jobs (RL)', () => {
  it('queues a job and GET shows it with its resolved configuration', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await postRl(user, {
      model_id: model.id,
      trajectory_groups: [{ trajectories: [traj(1), traj(0)], exceptions: [] }],
    });
    expect(res.status).toBe(200);
    const { id } = jobCreatedSchema.parse(res.body);
    expect(Object.keys(res.body)).toContain('id');

    const job = await readJob(user, id);
    expect(job).toMatchObject({
      id,
      model_id: model.id,
      type: 'rl',
      status: 'QUEUED',
      started_at: null,
      finished_at: null,
      error_message: null,
      step: null,
      base_step: 0,
      completed_steps: 0,
    });
    expect(Number.isNaN(Date.parse(job.created_at))).toBe(false);
    expect(job.config).toEqual({
      loss: 'ppo',
      epsilon: 0.2,
      epsilon_high: 0.2,
      advantage_balance: 0,
      tau: null,
      learning_rate: RL_DEFAULT_LEARNING_RATE,
      mask_prob_ratio: false,
      max_negative_advantage_importance_sampling_weight: null,
      precalculate_logprobs: false,
      scale_rewards: true,
      importance_sampling_level: 'token',
      allow_training_without_logprobs: false,
      lora: {},
      extra_settings: {},
      ignored_settings: {},
      num_groups: 1,
    });
  });

  it('keeps LoRA settings and the settings no trainer acts on with the job; refuses out-of-range LoRA values', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await postRl(user, {
      model_id: model.id,
      trajectory_groups: [{ trajectories: [traj(1), traj(0)] }],
      experimental_config: {
        lora_rank: 8,
        lora_target_modules: ['q_proj', 'v_proj'],
        kl_penalty_coef: 0.05,
        plot_tensors: true,
      },
    });
    expect(res.status).toBe(200);
    const job = await readJob(user, res.body.id);
    expect(job.config).toMatchObject({
      lora: { rank: 8, target_modules: ['q_proj', 'v_proj'] },
      extra_settings: { kl_penalty_coef: 0.05, plot_tensors: true },
    });
    const bad = await postRl(user, {
      model_id: model.id,
      trajectory_groups: [],
      experimental_config: { lora_rank: 0 },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'experimental_config', 'lora_rank']);
  });

  it('accepts the Dec-2025 all-null experimental_config and resolves it to PPO', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const id = await createRlJob(user, model.id, {
      trajectory_groups: [{ trajectories: [traj(1)], exceptions: [] }],
      experimental_config: DEC_2025_CONFIG,
    });
    expect((await readJob(user, id)).config).toMatchObject({ loss: 'ppo', epsilon: 0.2, epsilon_high: 0.2 });
  });

  it('accepts the 2026+ experimental_config, ignoring later keys, and resolves it to CISPO', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const id = await createRlJob(user, model.id, { experimental_config: ART_2026_CONFIG });
    const config = (await readJob(user, id)).config;
    expect(config).toMatchObject({ loss: 'cispo', epsilon: 1.0, epsilon_high: 4.0, scale_rewards: true });
    expect(config).not.toHaveProperty('kl_penalty_coef');
    expect(config).not.toHaveProperty('plot_tensors');
  });

  it('accepts experimental_config null or absent, the neutral tau spelling, and [] groups', async () => {
    const user = await createUser();
    const model = await createModel(user);
    for (const experimental_config of [null, undefined, {}]) {
      const res = await postRl(user, { model_id: model.id, trajectory_groups: [], experimental_config });
      expect(res.status).toBe(200);
      expect((await readJob(user, res.body.id)).config).toMatchObject({ loss: 'ppo', num_groups: 0 });
    }
    const tau = await createRlJob(user, model.id, { experimental_config: { alt_k2_tau: 0.5 } });
    expect((await readJob(user, tau)).config.tau).toBe(0.5);
    const both = await createRlJob(user, model.id, { experimental_config: { alt_k2_tau: 0.5, kimi_k2_tau: 0.25 } });
    expect((await readJob(user, both)).config.tau).toBe(0.25);
  });

  it('rejects wrong types and out-of-range values in experimental_config with 422', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ learning_rate: 'fast' }, 'learning_rate', 'float_parsing'],
      [{ ppo: 'maybe' }, 'ppo', 'bool_parsing'],
      [{ scale_rewards: 1 }, 'scale_rewards', 'bool_type'],
      [{ advantage_balance: 2 }, 'advantage_balance', 'value_error'],
      [{ advantage_balance: -1.5 }, 'advantage_balance', 'value_error'],
      [{ learning_rate: 0 }, 'learning_rate', 'value_error'],
      [{ learning_rate: -1e-5 }, 'learning_rate', 'value_error'],
      [{ epsilon: -0.1 }, 'epsilon', 'value_error'],
      [{ epsilon_high: -1 }, 'epsilon_high', 'value_error'],
      [
        { max_negative_advantage_importance_sampling_weight: -2 },
        'max_negative_advantage_importance_sampling_weight',
        'value_error',
      ],
    ];
    for (const [experimental_config, key, type] of cases) {
      const res = await postRl(user, { model_id: model.id, trajectory_groups: [], experimental_config });
      expect(res.status, JSON.stringify(experimental_config)).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'experimental_config', key], type });
      if (type === 'value_error') expect(res.body.detail[0].msg).toMatch(/^Value error, /);
    }
    const notObject = await postRl(user, { model_id: model.id, trajectory_groups: [], experimental_config: [1] });
    expect(notObject.status).toBe(422);
    expect(notObject.body.detail[0].loc).toEqual(['body', 'experimental_config']);

    // Boundaries are accepted.
    for (const experimental_config of [
      { advantage_balance: 1, epsilon: 0, epsilon_high: 0 },
      { advantage_balance: -1, max_negative_advantage_importance_sampling_weight: 0, kimi_k2_tau: 0 },
    ]) {
      const ok = await postRl(user, { model_id: model.id, trajectory_groups: [], experimental_config });
      expect(ok.status, JSON.stringify(experimental_config)).toBe(200);
    }
    // Nothing rejected was queued.
    const jobs = await call(modelJobsRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(trainingJobListSchema.parse(jobs.body).data).toHaveLength(2);
  });

  it('validates model_id and the group shapes', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const badId = await postRl(user, { model_id: 'not-a-uuid', trajectory_groups: [] });
    expect(badId.status).toBe(422);
    expect(badId.body.detail[0]).toMatchObject({ loc: ['body', 'model_id'], type: 'uuid_parsing' });
    expect(badId.body.detail[0].msg).toMatch(/^Input should be a valid UUID/);

    const missing = await postRl(user, { trajectory_groups: [] });
    expect(missing.body.detail).toEqual([{ loc: ['body', 'model_id'], msg: 'Field required', type: 'missing' }]);
    const noGroups = await postRl(user, { model_id: model.id });
    expect(noGroups.status).toBe(422);
    expect(noGroups.body.detail).toEqual([
      { loc: ['body', 'trajectory_groups'], msg: 'Field required', type: 'missing' },
    ]);
    const notArray = await postRl(user, { model_id: model.id, trajectory_groups: 'x' });
    expect(notArray.body.detail[0]).toMatchObject({ loc: ['body', 'trajectory_groups'], type: 'list_type' });
    const badReward = await postRl(user, {
      model_id: model.id,
      trajectory_groups: [{ trajectories: [{ ...traj(1), reward: null }] }],
    });
    expect(badReward.status).toBe(422);
    expect(badReward.body.detail[0].loc).toEqual(['body', 'trajectory_groups', 0, 'trajectories', 0, 'reward']);
    const badVersion = await postRl(user, {
      model_id: model.id,
      trajectory_groups: [{ trajectories: [{ ...traj(1), initial_policy_version: 'one' }] }],
    });
    expect(badVersion.status).toBe(422);
    expect(badVersion.body.detail[0]).toMatchObject({
      loc: ['body', 'trajectory_groups', 0, 'trajectories', 0, 'initial_policy_version'],
      type: 'int_parsing',
    });
    const noBody = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', { key: user.key });
    expect(noBody.body.detail).toEqual([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
  });

  it('answers 404 for an unknown or foreign model, and 401 without a key', async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const model = await createModel(owner);
    const unknown = await postRl(owner, { model_id: crypto.randomUUID(), trajectory_groups: [] });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'Model not found' });
    const foreign = await postRl(stranger, { model_id: model.id, trajectory_groups: [{ trajectories: [traj(1)] }] });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ detail: 'Model not found' });
    const anonymous = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
      body: { model_id: model.id, trajectory_groups: [] },
    });
    expect(anonymous.status).toBe(401);
    // The stranger's groups left no trace on the owner's model.
    const cps = await call(checkpointsRoute, 'GET', '/x', { key: owner.key, params: { model_id: model.id } });
    expect(checkpointListSchema.parse(cps.body).data[0].metrics).toEqual({});
  });

  it('writes train/* metrics of the submitted groups onto the checkpoint that is latest at submission', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await seedCheckpoints(model.id, [1, 2]);
    const id = await createRlJob(user, model.id, {
      trajectory_groups: [
        { trajectories: [traj(1, { correct: true }), traj(0, { correct: false })], exceptions: [] },
        {
          trajectories: [traj(3, { correct: true })],
          exceptions: [{ type: 'E', message: 'm', traceback: '' }],
          metrics: { m: 2 },
        },
      ],
    });
    expect((await readJob(user, id)).base_step).toBe(2);
    const cps = checkpointListSchema.parse(
      (await call(checkpointsRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } })).body,
    ).data;
    expect(cps.map((c) => c.step)).toEqual([0, 1, 2]);
    expect(cps[0].metrics).toEqual({});
    expect(cps[1].metrics).toEqual({});
    const m = cps[2].metrics;
    expect(Object.keys(m).sort()).toEqual([
      'train/correct',
      'train/exception_rate',
      'train/group_m',
      'train/reward',
      'train/reward_std_dev',
    ]);
    expect(m['train/reward']).toBeCloseTo(4 / 3, 12);
    expect(m['train/reward_std_dev']).toBeCloseTo(0.5, 12);
    expect(m['train/exception_rate']).toBeCloseTo(0.25, 12);
    expect(m['train/correct']).toBeCloseTo(2 / 3, 12);
    expect(m['train/group_m']).toBe(2);

    // The groups are stored with the job, browsable as source "train".
    const groups = trajectoryGroupListSchema.parse(
      (
        await call(trajectoriesRoute, 'GET', '/x', {
          key: user.key,
          params: { model_id: model.id },
          query: { source: 'train' },
        })
      ).body,
    ).data;
    expect(groups.map((g) => [g.step, g.split, g.job_id, g.group_index])).toEqual([
      [2, 'train', id, 0],
      [2, 'train', id, 1],
    ]);
  });

  it("answers 404 {'detail':'Training job not found'} for another user's job, unknown and malformed ids", async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const model = await createModel(owner);
    const id = await createRlJob(owner, model.id);
    for (const [user, jobId] of [
      [stranger, id],
      [owner, crypto.randomUUID()],
      [owner, 'not-a-uuid'],
      [owner, model.id],
    ] as const) {
      const res = await getJob(user, jobId);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Training job not found' });
    }
    const anonymous = await call(jobRoute, 'GET', '/x', { params: { training_job_id: id } });
    expect(anonymous.status).toBe(401);
  });
});

describe('GET /v1/preview/models/{id}/training-jobs', () => {
  it("lists a model's jobs newest first, filters by status and pages by cursor", async () => {
    const user = await createUser();
    const model = await createModel(user);
    const other = await createModel(user);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await createRlJob(user, model.id));
    await createRlJob(user, other.id);

    const seen: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 10; i++) {
      const res = await call(modelJobsRoute, 'GET', '/x', {
        key: user.key,
        params: { model_id: model.id },
        query: { limit: 2, after },
      });
      expect(res.status).toBe(200);
      const page = trainingJobListSchema.parse(res.body);
      seen.push(...page.data.map((j) => j.id));
      if (!page.has_more) break;
      after = page.last_id;
    }
    expect(seen).toEqual([...ids].reverse());

    const failed = await call(modelJobsRoute, 'GET', '/x', {
      key: user.key,
      params: { model_id: model.id },
      query: { status: 'FAILED' },
    });
    expect(trainingJobListSchema.parse(failed.body).data).toEqual([]);
    const badStatus = await call(modelJobsRoute, 'GET', '/x', {
      key: user.key,
      params: { model_id: model.id },
      query: { status: 'queued' },
    });
    expect(badStatus.status).toBe(422);
    const otherCursor = await call(modelJobsRoute, 'GET', '/x', {
      key: user.key,
      params: { model_id: other.id },
      query: { after: ids[0] },
    });
    expect(otherCursor.status).toBe(422);
    expect(otherCursor.body.detail[0]).toMatchObject({ loc: ['query', 'after'], msg: 'Value error, Unknown cursor' });
    const stranger = await createUser();
    const hidden = await call(modelJobsRoute, 'GET', '/x', { key: stranger.key, params: { model_id: model.id } });
    expect(hidden.status).toBe(404);
  });
});

const line = (...messages: { role: string; content: string | null }[]) => JSON.stringify({ messages });
const example = (q: string, a: string) =>
  line({ role: 'system', content: 'Be brief.' }, { role: 'user', content: q }, { role: 'assistant', content: a });
const jsonl = (n: number) => Array.from({ length: n }, (_, i) => example(`q${i}`, `a${i}`)).join('\n') + '\n';

async function dataset(user: TestUser, files: Record<string, string>, name = uniqueName('data-')) {
  const stored = await storeDataset(await principalOf(user), { project: 'proj', name, files });
  return { ...stored, name };
}

describe('POST /v1/preview/sft-training-jobs', () => {
  it('queues a job whose GET shows type sft and the default config', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const { training_data_url } = await dataset(user, { 'train.jsonl': jsonl(3) });
    expect(training_data_url).toMatch(new RegExp(`^wandb-artifact:///${user.handle}/proj/data-[0-9a-f]+:v0$`));
    const res = await postSft(user, { model_id: model.id, training_data_url });
    expect(res.status).toBe(200);
    const { id } = jobCreatedSchema.parse(res.body);
    const job = await readJob(user, id);
    expect(job).toMatchObject({ id, model_id: model.id, type: 'sft', status: 'QUEUED', base_step: 0, step: null });
    expect(job.config).toMatchObject({
      batch_size: 2,
      learning_rate: SFT_DEFAULT_LEARNING_RATE,
      assistant_turns: 'all',
      training_data_url,
      num_examples: 3,
    });
    expect(SFT_DEFAULT_LEARNING_RATE).toBe(5e-5);
  });

  it('honours config values, "auto" batch size, learning-rate lists and assistant_turns', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const { training_data_url } = await dataset(user, { 'train.jsonl': jsonl(4) });
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ config: { batch_size: 4, learning_rate: 1e-4 } }, { batch_size: 4, learning_rate: 1e-4 }],
      [{ config: { batch_size: 'auto', learning_rate: [1e-5, 2e-5] } }, { batch_size: 2, learning_rate: [1e-5, 2e-5] }],
      [
        { config: null, experimental_config: { anything: true } },
        { batch_size: 2, learning_rate: 5e-5 },
      ],
      [{ config: { assistant_turns: 'last', metric_logging: { x: 1 } } }, { assistant_turns: 'last' }],
      [{ assistant_turns: 'last' }, { assistant_turns: 'last' }],
    ];
    for (const [extra, expected] of cases) {
      const res = await postSft(user, { model_id: model.id, training_data_url, ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(200);
      expect((await readJob(user, res.body.id)).config).toMatchObject(expected);
    }
  });

  it('accepts a learning-rate schedule that ends at 0 (ART train_sft_from_file) and epochs; rejects negative, huge and out-of-range values', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const { training_data_url } = await dataset(user, { 'train.jsonl': jsonl(4) });
    // What the real client sends for a linear schedule over four batches: its last entries are exactly 0.
    const schedule = [2e-5, 1e-5, 0.0, 0.0];
    const ok = await postSft(user, {
      model_id: model.id,
      training_data_url,
      config: { learning_rate: schedule, epochs: 2 },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await readJob(user, ok.body.id)).config).toMatchObject({ learning_rate: schedule, epochs: 2 });
    const byDefault = await postSft(user, { model_id: model.id, training_data_url });
    expect((await readJob(user, byDefault.body.id)).config).toMatchObject({ epochs: 1 });

    const bad: [Record<string, unknown>, (string | number)[]][] = [
      [{ learning_rate: [1e-5, -1e-6] }, ['body', 'config', 'learning_rate']],
      [{ learning_rate: [1e-5, 1e308] }, ['body', 'config', 'learning_rate']],
      [{ learning_rate: 1e308 }, ['body', 'config', 'learning_rate']],
      [{ learning_rate: 0 }, ['body', 'config', 'learning_rate']],
      [{ learning_rate: [] }, ['body', 'config', 'learning_rate']],
      [{ epochs: 0 }, ['body', 'config', 'epochs']],
      [{ epochs: 1.5 }, ['body', 'config', 'epochs']],
    ];
    for (const [config, loc] of bad) {
      const res = await postSft(user, { model_id: model.id, training_data_url, config });
      expect(res.status, JSON.stringify(config)).toBe(422);
      expect(JSON.stringify(res.body.detail), JSON.stringify(config)).toContain(JSON.stringify(loc).slice(1, -1));
    }
  });

  it('accepts both wandb-artifact spellings and resolves vN, latest and no version', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const name = uniqueName('data-');
    await dataset(user, { 'train.jsonl': jsonl(1) }, name);
    await dataset(user, { 'train.jsonl': jsonl(2) }, name);
    const base = `${user.handle}/proj/${name}`;
    const cases: [string, number][] = [
      [`wandb-artifact:///${base}:v0`, 1],
      [`wandb-artifact:///${base}:v1`, 2],
      [`wandb-artifact://${base}:v0`, 1],
      [`wandb-artifact:///${base}:latest`, 2],
      [`wandb-artifact://${base}`, 2],
      [`wandb-artifact:///${base}`, 2],
    ];
    for (const [training_data_url, count] of cases) {
      const res = await postSft(user, { model_id: model.id, training_data_url });
      expect(res.status, training_data_url).toBe(200);
      expect((await readJob(user, res.body.id)).config.num_examples, training_data_url).toBe(count);
    }
    const missingVersion = await postSft(user, {
      model_id: model.id,
      training_data_url: `wandb-artifact:///${base}:v7`,
    });
    expect(missingVersion.status).toBe(422);
    expect(missingVersion.body.detail[0]).toMatchObject({ loc: ['body', 'training_data_url'], type: 'value_error' });
  });

  it('reads train.jsonl, else trajectories.jsonl, else the first *.jsonl by name', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const pick = async (files: Record<string, string>) => {
      const { training_data_url } = await dataset(user, files);
      const res = await postSft(user, { model_id: model.id, training_data_url });
      return res.status === 200 ? (await readJob(user, res.body.id)).config.num_examples : res.body.detail[0].msg;
    };
    expect(await pick({ 'trajectories.jsonl': jsonl(2), 'train.jsonl': jsonl(3), 'metadata.json': '{}' })).toBe(3);
    expect(await pick({ 'trajectories.jsonl': jsonl(2), 'a.jsonl': jsonl(5) })).toBe(2);
    expect(await pick({ 'b.jsonl': jsonl(4), 'a.jsonl': jsonl(1) })).toBe(1);
  });

  it('rejects a bad line with a 422 naming the file and line', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const body = [example('a', 'b'), '', line({ role: 'user', content: 'no answer' }), example('c', 'd')].join('\n');
    const { training_data_url } = await dataset(user, { 'train.jsonl': body });
    const res = await postSft(user, { model_id: model.id, training_data_url });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ['body', 'training_data_url'],
        msg: 'Value error, train.jsonl line 3: last message must have role "assistant"',
        type: 'value_error',
        input: training_data_url,
      },
    ]);

    const badJson = await dataset(user, { 'trajectories.jsonl': `${example('a', 'b')}\n{"messages": [` });
    const json = await postSft(user, { model_id: model.id, training_data_url: badJson.training_data_url });
    expect(json.status).toBe(422);
    expect(json.body.detail[0].msg).toMatch(/^Value error, trajectories\.jsonl line 2: invalid JSON/);

    // A rejected dataset queues nothing.
    const jobs = await call(modelJobsRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(trainingJobListSchema.parse(jobs.body).data).toEqual([]);
  });

  it('rejects a missing artifact, other schemes, malformed references and datasets without examples', async () => {
    const user = await createUser();
    const stranger = await createUser();
    const model = await createModel(user);
    const theirs = await dataset(stranger, { 'train.jsonl': jsonl(1) });
    const empty = await dataset(user, { 'train.jsonl': '\n\n  \n' });
    const urls = [
      `wandb-artifact:///${user.handle}/proj/${uniqueName('nothing-')}:v0`,
      theirs.training_data_url,
      `s3://bucket/${user.handle}/proj/data:v0`,
      `https://example.test/train.jsonl`,
      `wandb-artifact:///${user.handle}/data:v0`,
      `wandb-artifact:///${user.handle}/proj/data:v0/extra`,
      empty.training_data_url,
    ];
    for (const training_data_url of urls) {
      const res = await postSft(user, { model_id: model.id, training_data_url });
      expect(res.status, training_data_url).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'training_data_url'], type: 'value_error' });
    }
    const noExamples = await postSft(user, { model_id: model.id, training_data_url: empty.training_data_url });
    expect(noExamples.body.detail[0].msg).toBe('Value error, train.jsonl has no training examples');
    const notFound = await postSft(user, { model_id: model.id, training_data_url: urls[0] });
    expect(notFound.body.detail[0].msg).toMatch(/^Value error, Training data artifact not found/);

    const blank = await postSft(user, { model_id: model.id, training_data_url: '' });
    expect(blank.status).toBe(422);
    expect(blank.body.detail[0].loc).toEqual(['body', 'training_data_url']);
  });

  it('validates config, model_id, and answers 404 for an unknown model', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const { training_data_url } = await dataset(user, { 'train.jsonl': jsonl(2) });
    const bad: [Record<string, unknown>, (string | number)[]][] = [
      [{ config: { learning_rate: [] } }, ['body', 'config', 'learning_rate']],
      [{ config: { learning_rate: 0 } }, ['body', 'config', 'learning_rate']],
      [{ config: { learning_rate: [1e-5, -1] } }, ['body', 'config', 'learning_rate']],
      [{ config: { batch_size: 0 } }, ['body', 'config', 'batch_size']],
      [{ config: { batch_size: 'big' } }, ['body', 'config', 'batch_size']],
      [{ config: { assistant_turns: 'first' } }, ['body', 'config', 'assistant_turns']],
      [{ config: 'fast' }, ['body', 'config']],
      [{ model_id: 'nope' }, ['body', 'model_id']],
    ];
    for (const [extra, loc] of bad) {
      const res = await postSft(user, { model_id: model.id, training_data_url, ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(422);
      expect(res.body.detail[0].loc.slice(0, loc.length)).toEqual(loc);
    }
    const badId = await postSft(user, { model_id: 'nope', training_data_url });
    expect(badId.body.detail[0].type).toBe('uuid_parsing');
    const missing = await postSft(user, { model_id: model.id });
    expect(missing.body.detail).toEqual([
      { loc: ['body', 'training_data_url'], msg: 'Field required', type: 'missing' },
    ]);

    const unknown = await postSft(user, { model_id: crypto.randomUUID(), training_data_url });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'Model not found' });
    const stranger = await createUser();
    const foreign = await postSft(stranger, { model_id: model.id, training_data_url });
    expect(foreign.status).toBe(404);
    const anonymous = await call(sftJobsRoute, 'POST', '/x', { body: { model_id: model.id, training_data_url } });
    expect(anonymous.status).toBe(401);
  });

  it("hides another user's SFT job behind 404", async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const model = await createModel(owner);
    const { training_data_url } = await dataset(owner, { 'train.jsonl': jsonl(1) });
    const res = await postSft(owner, { model_id: model.id, training_data_url });
    const hidden = await getJob(stranger, res.body.id);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ detail: 'Training job not found' });
  });
});
