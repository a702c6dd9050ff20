import v8 from 'node:v8';
import { describe, expect, it, vi } from 'vitest';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import * as sftJobsRoute from '@/app/v1/preview/sft-training-jobs/route';
import * as eventsRoute from '@/app/v1/preview/training-jobs/[training_job_id]/events/route';
import * as jobRoute from '@/app/v1/preview/training-jobs/[training_job_id]/route';
import * as rlJobsRoute from '@/app/v1/preview/training-jobs/route';
import { loadBaseModel } from '@/lib/engine/base-models';
import { decodeModel, encodeModel } from '@/lib/engine/safetensors';
import { trainingHandlers } from '@/lib/jobs/worker/handlers';
import { inProcessProtocol } from '@/tests/support/in-process-protocol';
import { checkpointKey } from '@/lib/jobs/protocol';
import { runOneJob, TrainingError } from '@/lib/jobs/worker/runner';
import type { WorkerJob } from '@/lib/jobs/protocol';
import { resolveRlConfig } from '@/lib/schemas/training-jobs';
import { storeDataset } from '@/lib/services/datasets';
import { deleteCheckpoints } from '@/lib/services/checkpoints';
import { evaluateSft, tokenizeSftExamples } from '@/lib/engine/train/sft';
import { Trainer } from '@/lib/engine/train/trainer';
import { readArtifactBytes } from '@/lib/storage';
import { call, createModel, createUser, principalOf, uniqueName, type TestUser } from '../support/helpers';
import { claimOnly } from './claim-only';

// What the worker process does at start-up (lib/jobs/worker/worker-main.ts).
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const fakeJob: WorkerJob = {
  id: 'job',
  kind: 'rl',
  model_id: 'model',
  base_model: 'tuneboard/tiny-random',
  backend: 'builtin',
  base_model_path: null,
  config: resolveRlConfig(null),
  base_checkpoint: null,
  attempts: 1,
  lease_seconds: 60,
};

const protocolFor = (modelId: string) => claimOnly(inProcessProtocol(`test:${modelId}`), modelId);

async function events(user: TestUser, jobId: string) {
  const res = await call(eventsRoute, 'GET', '/x', {
    key: user.key,
    params: { training_job_id: jobId },
    query: { limit: 100 },
  });
  return res.body.data as { type: string; data: Record<string, number> }[];
}

async function job(user: TestUser, jobId: string) {
  return (await call(jobRoute, 'GET', '/x', { key: user.key, params: { training_job_id: jobId } })).body;
}

async function latestCheckpoint(user: TestUser, modelId: string) {
  const res = await call(checkpointsRoute, 'GET', '/x', {
    key: user.key,
    params: { model_id: modelId },
    query: { order: 'desc', limit: 1 },
  });
  return res.body.data[0] as { step: number; metrics: Record<string, number> };
}

const line = (q: string, a: string) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: q },
      { role: 'assistant', content: a },
    ],
  });

describe('built-in training handlers through the job path', () => {
  it('SFT: started → one gradient_step per batch → ended, checkpoint with train/loss and new weights', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const pairs = ['sky?:blue', 'grass?:green', 'snow?:white', 'coal?:black', 'sun?:yellow', 'sea?:teal'].map((p) =>
      p.split(':'),
    );
    const stored = await storeDataset(await principalOf(user), {
      project: 'proj',
      name: uniqueName('data-'),
      files: { 'train.jsonl': pairs.map(([q, a]) => line(q, a)).join('\n') + '\n' },
    });
    const res = await call(sftJobsRoute, 'POST', '/v1/preview/sft-training-jobs', {
      key: user.key,
      body: {
        model_id: model.id,
        training_data_url: stored.training_data_url,
        config: { batch_size: 4, learning_rate: [1e-3, 5e-4] },
      },
    });
    expect(res.status).toBe(200);
    const jobId = res.body.id as string;

    expect(await runOneJob(protocolFor(model.id), trainingHandlers())).toBe(true);

    expect(await job(user, jobId)).toMatchObject({
      status: 'COMPLETED',
      step: 1,
      num_sequences: 2,
      completed_steps: 2,
    });
    const list = await events(user, jobId);
    expect(list.map((e) => e.type)).toEqual(['training_started', 'gradient_step', 'gradient_step', 'training_ended']);
    expect(list[0].data).toEqual({ num_sequences: 2, load_seconds: expect.any(Number) });
    expect(list[1].data).toMatchObject({ learning_rate: 1e-3, num_trajectories: 4 });
    expect(list[2].data).toMatchObject({ learning_rate: 5e-4, num_trajectories: 2 });
    for (const e of list.slice(1, 3)) {
      expect(Object.keys(e.data).sort()).toEqual([
        'grad_norm',
        'learning_rate',
        'loss',
        'num_trainable_tokens',
        'num_trajectories',
        'step_seconds',
        'tokens_per_second',
      ]);
    }
    const cp = await latestCheckpoint(user, model.id);
    expect(cp.step).toBe(1);
    expect(cp.metrics['train/loss']).toBeCloseTo((list[1].data.loss + list[2].data.loss) / 2, 5);
    expect(cp.metrics['train/num_gradient_steps']).toBe(2);

    const bytes = await readArtifactBytes(checkpointKey(model.id, jobId));
    expect(bytes).toBeDefined();
    const trained = decodeModel(bytes!);
    const { model: base } = loadBaseModel('tuneboard/tiny-random', null);
    const name = 'model.layers.0.mlp.up_proj.weight';
    const baseTensor = base.getTensor(name);
    expect(trained.getTensor(name).some((w, i) => w !== baseTensor[i])).toBe(true);
    expect(trained.config).toEqual(base.config);
    // The stored checkpoint runs.
    expect(trained.forward([{ tokens: [1, 2, 3] }])[0].every(Number.isFinite)).toBe(true);
    trained.release();
    base.release();
  });

  it('SFT validation_split holds evenly spaced lines out and scores them each epoch; val/* lands on the checkpoint', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const lines = Array.from({ length: 10 }, (_, i) => line(`q${i}?`, `a${i}`));
    const stored = await storeDataset(await principalOf(user), {
      project: 'proj',
      name: uniqueName('data-'),
      files: { 'train.jsonl': lines.join('\n') + '\n' },
    });
    const res = await call(sftJobsRoute, 'POST', '/v1/preview/sft-training-jobs', {
      key: user.key,
      body: {
        model_id: model.id,
        training_data_url: stored.training_data_url,
        config: { batch_size: 4, learning_rate: 1e-3, epochs: 3, validation_split: 0.2 },
      },
    });
    expect(res.status).toBe(200);
    const jobId = res.body.id as string;

    const protocol = protocolFor(model.id);
    const inputs: Awaited<ReturnType<typeof protocol.input>>[] = [];
    const recording = { ...protocol, input: async (id: string) => inputs[inputs.push(await protocol.input(id)) - 1] };
    expect(await runOneJob(recording, trainingHandlers())).toBe(true);
    // Two of ten, the middle of each half: lines 3 and 8 (1-based); the other eight train, 2 batches × 3 epochs.
    const input = inputs[0];
    expect(input.kind === 'sft' && input.validation.map((e) => e.line)).toEqual([3, 8]);
    expect(input.kind === 'sft' && input.examples.map((e) => e.line)).toEqual([1, 2, 4, 5, 6, 7, 9, 10]);
    expect(await job(user, jobId)).toMatchObject({ status: 'COMPLETED', num_sequences: 6 });

    const steps = (await events(user, jobId)).filter((e) => e.type === 'gradient_step');
    expect(steps.map((e) => 'val/loss' in e.data)).toEqual([false, true, false, true, false, true]);
    for (const e of steps.filter((x) => 'val/loss' in x.data)) {
      expect(e.data['val/loss']).toBeGreaterThan(0);
      expect(e.data['val/token_accuracy']).toBeGreaterThanOrEqual(0);
      expect(e.data['val/token_accuracy']).toBeLessThanOrEqual(1);
    }
    const cp = await latestCheckpoint(user, model.id);
    // The last epoch's figures describe the saved weights; they are not averaged, and not filed under train/.
    expect(cp.metrics['val/loss']).toBe(steps[5].data['val/loss']);
    expect(cp.metrics['val/token_accuracy']).toBe(steps[5].data['val/token_accuracy']);
    expect(Object.keys(cp.metrics).filter((k) => k.startsWith('train/val'))).toEqual([]);

    // The stored weights, scored afresh on the held-out lines, give the same val/loss: it is the checkpoint's.
    const trained = decodeModel((await readArtifactBytes(checkpointKey(model.id, jobId)))!);
    const { tokenizer } = loadBaseModel('tuneboard/tiny-random', null);
    const trainer = new Trainer(trained);
    const heldOut = tokenizeSftExamples(tokenizer, input.kind === 'sft' ? input.validation : [], trained.config.ctx, {
      assistantTurns: 'all',
    });
    expect(evaluateSft(trainer, heldOut)['val/loss']).toBeCloseTo(cp.metrics['val/loss'], 5);
    trainer.release();
    trained.release();
  });

  it('SFT start_from trains from the base model or a named step; a missing step is 422, a deleted one fails the job', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const stored = await storeDataset(await principalOf(user), {
      project: 'proj',
      name: uniqueName('data-'),
      files: { 'train.jsonl': line('sky?', 'blue') + '\n' },
    });
    const submit = (config: Record<string, unknown>) =>
      call(sftJobsRoute, 'POST', '/v1/preview/sft-training-jobs', {
        key: user.key,
        body: { model_id: model.id, training_data_url: stored.training_data_url, config },
      });
    const protocol = protocolFor(model.id);
    const claimed: (WorkerJob | null)[] = [];
    const recording = { ...protocol, claim: async () => claimed[claimed.push(await protocol.claim()) - 1] };
    const run = async (config: Record<string, unknown>) => {
      const res = await submit(config);
      expect(res.status).toBe(200);
      await runOneJob(recording, trainingHandlers());
      return { id: res.body.id as string, claim: claimed.at(-1)! };
    };

    const first = await run({});
    expect(first.claim.base_checkpoint?.step).toBe(0);
    const second = await run({});
    expect(second.claim.base_checkpoint?.step).toBe(1);
    // From step 1 again, not the latest (2); the new checkpoint still takes the next number.
    const fromOne = await run({ start_from: 1 });
    expect(fromOne.claim.base_checkpoint).toEqual({ step: 1, artifact_key: checkpointKey(model.id, first.id) });
    expect(await job(user, fromOne.id)).toMatchObject({ status: 'COMPLETED', step: 3, base_step: 1 });
    const fromBase = await run({ start_from: 'base' });
    expect(fromBase.claim.base_checkpoint).toBeNull();
    expect(await job(user, fromBase.id)).toMatchObject({ status: 'COMPLETED', step: 4, base_step: null });
    // Trained from the base weights: one step on one example from the base gives what the first job gave.
    const weights = async (id: string) => decodeModel((await readArtifactBytes(checkpointKey(model.id, id)))!);
    const [a, b] = [await weights(first.id), await weights(fromBase.id)];
    const name = 'model.layers.0.mlp.up_proj.weight';
    expect(Array.from(b.getTensor(name))).toEqual(Array.from(a.getTensor(name)));
    a.release();
    b.release();

    const missing = await submit({ start_from: 42 });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({
      loc: ['body', 'config', 'start_from'],
      msg: 'Value error, The model has no checkpoint at step 42',
    });
    expect((await submit({ start_from: 'earliest' })).status).toBe(422);
    expect((await submit({ validation_split: 0.2 })).body.detail[0].msg).toMatch(/at least 2 examples/);

    const doomed = await submit({ start_from: 2 });
    await deleteCheckpoints(await principalOf(user), model.id, [2]);
    await runOneJob(recording, trainingHandlers());
    expect(await job(user, doomed.body.id)).toMatchObject({
      status: 'FAILED',
      error_message: 'Checkpoint step 2 was deleted before the job started; nothing to train from',
    });
  });

  it('RL: one gradient_step per trainable history, group counts on the checkpoint, next job from it', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const choice = (ids: number[]) => ({
      finish_reason: 'stop',
      index: 0,
      logprobs: {
        content: ids.map((id) => ({ token: `token_id:${id}`, logprob: -5.5, bytes: [], top_logprobs: [] })),
        refusal: null,
      },
      message: { role: 'assistant', content: String.fromCharCode(...ids) },
    });
    const traj = (reward: number, ids: number[]) => ({
      messages_and_choices: [{ role: 'user', content: 'digit?' }, choice(ids)],
      tools: null,
      additional_histories: [],
      reward,
      metrics: {},
    });
    const submit = async (groups: unknown[]) => {
      const res = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
        key: user.key,
        body: { model_id: model.id, trajectory_groups: groups, experimental_config: { learning_rate: 1e-3 } },
      });
      expect(res.status).toBe(200);
      return res.body.id as string;
    };
    const first = await submit([{ trajectories: [traj(1, [55]), traj(0, [51]), traj(0, [52])], exceptions: [] }]);
    await runOneJob(protocolFor(model.id), trainingHandlers());
    expect(await job(user, first)).toMatchObject({ status: 'COMPLETED', step: 1, num_sequences: 3 });
    const list = await events(user, first);
    expect(list.map((e) => e.type)).toEqual([
      'training_started',
      'gradient_step',
      'gradient_step',
      'gradient_step',
      'training_ended',
    ]);
    expect(list[1].data).toMatchObject({
      num_groups_submitted: 1,
      num_groups_trainable: 1,
      zero_advantage_share: 0,
      num_trajectories: 3,
      learning_rate: 1e-3,
    });
    const cp = await latestCheckpoint(user, model.id);
    expect(cp.metrics['train/num_groups_trainable']).toBe(1);
    expect(Number.isFinite(cp.metrics['train/entropy'])).toBe(true);

    // The next job trains from that checkpoint (ctx.baseWeights), not from the base model.
    const second = await submit([{ trajectories: [traj(1, [55]), traj(0, [51])], exceptions: [] }]);
    await runOneJob(protocolFor(model.id), trainingHandlers());
    expect(await job(user, second)).toMatchObject({ status: 'COMPLETED', step: 2, num_sequences: 2 });
    const [a, b] = await Promise.all([first, second].map((id) => readArtifactBytes(checkpointKey(model.id, id))));
    expect(Buffer.from(a!).equals(Buffer.from(b!))).toBe(false);
  });

  it('RL with nothing trainable still adds a step: num_sequences 0, the weights unchanged', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const same = {
      finish_reason: 'stop',
      index: 0,
      logprobs: { content: [{ token: 'token_id:55', logprob: -1 }] },
      message: { role: 'assistant', content: '7' },
    };
    const res = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
      key: user.key,
      body: {
        model_id: model.id,
        trajectory_groups: [
          { trajectories: [1, 1].map((reward) => ({ messages_and_choices: [same], reward })), exceptions: [] },
        ],
      },
    });
    await runOneJob(protocolFor(model.id), trainingHandlers());
    expect(await job(user, res.body.id)).toMatchObject({ status: 'COMPLETED', step: 1, num_sequences: 0 });
    expect((await events(user, res.body.id)).map((e) => e.type)).toEqual(['training_started', 'training_ended']);
    const cp = await latestCheckpoint(user, model.id);
    expect(cp.metrics).toMatchObject({
      'train/num_groups_trainable': 0,
      'train/num_groups_submitted': 1,
      'train/zero_advantage_share': 1,
      'train/num_gradient_steps': 0,
    });
    const { model: base } = loadBaseModel('tuneboard/tiny-random', null);
    const stored = await readArtifactBytes(checkpointKey(model.id, res.body.id));
    // Buffer.equals: vitest's deep equality walks 2 MB element by element far too slowly.
    expect(Buffer.from(stored!).equals(Buffer.from(encodeModel(base)))).toBe(true);
    base.release();
  });

  it('fails with a precise message for a token outside the vocabulary and for unbuilt base weights', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const bad = {
      finish_reason: 'stop',
      index: 0,
      logprobs: { content: [{ token: 'not-a-token', logprob: -1 }] },
      message: { role: 'assistant', content: 'x' },
    };
    const res = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
      key: user.key,
      body: {
        model_id: model.id,
        trajectory_groups: [
          {
            trajectories: [
              { messages_and_choices: [bad], reward: 1 },
              { messages_and_choices: [bad], reward: 0 },
            ],
            exceptions: [],
          },
        ],
      },
    });
    await runOneJob(protocolFor(model.id), trainingHandlers());
    expect(await job(user, res.body.id)).toMatchObject({
      status: 'FAILED',
      error_message: 'group 1, trajectory 1: token "not-a-token" is not in the model\'s vocabulary',
    });

    // tiny-chat is not offered to clients until its weights exist, so its handler path is driven directly. Its
    // shipped weights resolve against the application's directory (the working directory), moved here to one
    // without them.
    const cwd = vi.spyOn(process, 'cwd').mockReturnValue('/nonexistent');
    try {
      const ctx = {
        job: { ...fakeJob, base_model: 'tuneboard/tiny-chat' },
        input: { kind: 'rl' as const, trajectory_groups: [] },
        baseWeights: null,
        signal: new AbortController().signal,
        started: async () => undefined,
        step: async () => undefined,
      };
      await expect(trainingHandlers().rl!(ctx)).rejects.toThrow(
        new TrainingError(
          'The weights of base model "tuneboard/tiny-chat" are not built yet (models/tiny-chat.safetensors is missing)',
        ),
      );
    } finally {
      cwd.mockRestore();
    }
  });
});
