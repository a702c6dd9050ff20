import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bootWorkerToken } from '@/lib/jobs/server/worker-token';
import { trainingJobSchema } from '@/lib/schemas/training-jobs';
import { claimResponseSchema, trainingWorkerListSchema } from '@/lib/schemas/workers';
import { createModel, createUser, uniqueName, type TestUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';
import { useBaseModels } from '../support/base-models';

// A base-models file with one Hugging Face model beside the built-in ones (the real file lists none yet).
const HF_BASE = 'test-org/tiny-qwen3';
beforeAll(() => useBaseModels([{ id: HF_BASE, backend: 'hf', path: 'models/tiny-qwen3' }]));

const worker = { authorization: `Bearer ${bootWorkerToken()}`, 'content-type': 'application/json' };

async function api(user: TestUser | null, method: string, url: string, body?: unknown, raw?: BodyInit) {
  const headers: Record<string, string> = user
    ? { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' }
    : raw !== undefined
      ? { authorization: worker.authorization, 'content-type': 'application/octet-stream' }
      : worker;
  const res = await routeFetch(`http://localhost${url}`, {
    method,
    headers,
    body: raw !== undefined ? raw : body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, raw: text, headers: res.headers };
}

async function hfJob() {
  const user = await createUser();
  const model = await createModel(user, { base_model: HF_BASE });
  const created = await api(user, 'POST', '/v1/preview/training-jobs', {
    model_id: model.id,
    trajectory_groups: [{ trajectories: [{ messages_and_choices: [], reward: 1 }] }],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return { user, model, jobId: created.body.id as string };
}

const claim = async (id: string, modelId: string, capabilities?: unknown) =>
  claimResponseSchema.parse(
    (
      await api(null, 'POST', '/v1/workers/claim', {
        worker_id: id,
        model_ids: [modelId],
        capabilities,
        info: { device: 'cpu' },
      })
    ).body,
  ).job;

describe('claim capabilities and the worker registry', () => {
  it('a Hugging Face job waits, saying why, until a worker with the hf backend claims it', async () => {
    const { user, model, jobId } = await hfJob();
    const readJob = async () =>
      trainingJobSchema.parse((await api(user, 'GET', `/v1/preview/training-jobs/${jobId}`)).body);
    expect((await readJob()).waiting_reason).toMatch(new RegExp(`^Waiting for a worker that can train ${HF_BASE}`));

    // A worker without capabilities (the built-in runner) never takes it; nor one limited to other base models.
    expect(await claim(uniqueName('builtin:'), model.id)).toBeNull();
    expect(await claim(uniqueName('gpu:'), model.id, { backends: ['hf'], base_models: ['Qwen/Qwen3-8B'] })).toBeNull();
    expect((await readJob()).waiting_reason).toMatch(/^Waiting for a worker that can train/);

    const gpu = uniqueName('gpu:');
    const job = await claim(gpu, model.id, { backends: ['hf'], base_models: [HF_BASE] });
    expect(job).toMatchObject({ id: jobId, backend: 'hf', base_model: HF_BASE, base_model_path: 'models/tiny-qwen3' });
    const running = await readJob();
    expect(running).toMatchObject({ status: 'RUNNING', waiting_reason: null });

    // A second job of the same model waits for the first.
    const next = await api(user, 'POST', '/v1/preview/training-jobs', { model_id: model.id, trajectory_groups: [] });
    const waiting = trainingJobSchema.parse((await api(user, 'GET', `/v1/preview/training-jobs/${next.body.id}`)).body);
    expect(waiting.waiting_reason).toMatch(/earlier job of this model/);

    // The dashboard's list: the busy worker with its job (visible to its owner), not to a stranger.
    const mine = trainingWorkerListSchema.parse((await api(user, 'GET', '/v1/preview/training-workers')).body);
    expect(mine.data.find((w) => w.id === gpu)).toMatchObject({
      backends: ['hf'],
      base_models: [HF_BASE],
      status: 'busy',
      current_job_id: jobId,
      current_base_model: HF_BASE,
      info: { device: 'cpu' },
    });
    const stranger = await createUser();
    const theirs = trainingWorkerListSchema.parse((await api(stranger, 'GET', '/v1/preview/training-workers')).body);
    expect(theirs.data.find((w) => w.id === gpu)).toMatchObject({ status: 'busy', current_job_id: null });
  });

  it('a worker that signs off leaves the registry at once, unless it still holds a job', async () => {
    const { user, model, jobId } = await hfJob();
    // Another model's job, which only this worker can train.
    const other = await createModel(user, { base_model: HF_BASE });
    const queued = await api(user, 'POST', '/v1/preview/training-jobs', { model_id: other.id, trajectory_groups: [] });
    const gpu = uniqueName('gpu:');
    const claimed = await api(null, 'POST', '/v1/workers/claim', {
      worker_id: gpu,
      model_ids: [model.id, other.id],
      capabilities: { backends: ['hf'], base_models: [HF_BASE] },
    });
    expect(claimed.body.job?.id).toBe(jobId);
    const reason = async () =>
      trainingJobSchema.parse((await api(user, 'GET', `/v1/preview/training-jobs/${queued.body.id}`)).body)
        .waiting_reason;
    expect(await reason()).toMatch(/^Waiting for a free worker/);
    const signOff = async () => (await api(null, 'POST', '/v1/workers/sign-off', { worker_id: gpu })).body;
    // Busy: it stays (its job's lease decides that job's fate).
    expect(await signOff()).toEqual({ signed_off: false });
    expect(await reason()).toMatch(/^Waiting for a free worker/);
    await api(null, 'POST', `/v1/workers/jobs/${jobId}/fail`, { worker_id: gpu, error_message: 'stopping' });
    expect(await reason()).toBe('Waiting for a worker to pick it up');
    // Idle and leaving: gone now, not after the live window (60 s).
    expect(await signOff()).toEqual({ signed_off: true });
    expect(await reason()).toMatch(
      new RegExp(`^Waiting for a worker that can train ${HF_BASE} \\(RL\\); none is connected`),
    );
    const list = trainingWorkerListSchema.parse((await api(user, 'GET', '/v1/preview/training-workers')).body);
    expect(list.data.find((w) => w.id === gpu)).toBeUndefined();
    expect(await signOff()).toEqual({ signed_off: false });
    expect((await api(null, 'POST', '/v1/workers/sign-off', { worker_id: '' })).status).toBe(422);
  });

  it('a built-in job is not claimed by an hf-only worker', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await api(user, 'POST', '/v1/preview/training-jobs', { model_id: model.id, trajectory_groups: [] });
    expect(await claim(uniqueName('gpu:'), model.id, { backends: ['hf'] })).toBeNull();
    expect(await claim(uniqueName('both:'), model.id, { backends: ['builtin', 'hf'] })).not.toBeNull();
  });
});

describe('retry-safe worker calls and LoRA checkpoints', () => {
  it('resent events, uploads, complete and fail neither duplicate nor fail; gaps and foreign keys are refused', async () => {
    const { user, model, jobId } = await hfJob();
    const gpu = uniqueName('gpu:');
    expect((await claim(gpu, model.id, { backends: ['hf'] }))?.id).toBe(jobId);
    const events = (seq: number | undefined, evs: unknown[]) =>
      api(null, 'POST', `/v1/workers/jobs/${jobId}/events`, { worker_id: gpu, events: evs, seq });
    const started = { type: 'training_started', data: { num_sequences: 2 } };
    const step = (loss: number) => ({ type: 'gradient_step', data: { loss } });
    expect((await events(0, [started, step(1)])).body).toEqual({ appended: 2 });
    // The answer was lost and the worker sends the same batch again: nothing is added, nothing is refused.
    expect((await events(0, [started, step(1)])).body).toEqual({ appended: 0 });
    expect((await events(1, [step(1), step(0.5)])).body).toEqual({ appended: 1 });
    const gap = await events(9, [step(0.1)]);
    expect(gap.status).toBe(409);
    expect(gap.raw).toMatch(/never received; resend from 3/);
    const listed = await api(user, 'GET', `/v1/preview/training-jobs/${jobId}/events`);
    expect(listed.body.data.map((e: { type: string }) => e.type)).toEqual([
      'training_started',
      'gradient_step',
      'gradient_step',
    ]);

    const upload = (file: string, body: BodyInit) =>
      api(
        null,
        'PUT',
        `/v1/workers/jobs/${jobId}/checkpoint?worker_id=${encodeURIComponent(gpu)}&file=${file}`,
        undefined,
        body,
      );
    expect((await upload('model.safetensors', new Uint8Array([1]))).status).toBe(422);
    expect((await upload('adapter_config.json', '{"not": "peft"}')).status).toBe(422);
    const config = JSON.stringify({ peft_type: 'LORA', r: 4, lora_alpha: 8, base_model_name_or_path: HF_BASE });
    const weights = new Uint8Array(700).map((_, i) => i % 251);
    const keyOf = async (file: string, body: BodyInit) => {
      const res = await upload(file, body);
      expect(res.status, res.raw).toBe(200);
      return res.body.artifact_key as string;
    };
    const weightsKey = await keyOf('adapter_model.safetensors', weights);
    expect(await keyOf('adapter_model.safetensors', weights)).toBe(weightsKey); // a resent upload: same key
    expect(weightsKey).toBe(`models/${model.id}/checkpoints/${jobId}/adapter_model.safetensors`);

    const complete = (artifact_key: string) =>
      api(null, 'POST', `/v1/workers/jobs/${jobId}/complete`, { worker_id: gpu, artifact_key });
    expect((await complete(weightsKey)).raw).toMatch(/adapter_config\.json of this LoRA checkpoint was not uploaded/);
    expect(await keyOf('adapter_config.json', config)).toBe(
      weightsKey.replace('adapter_model.safetensors', 'adapter_config.json'),
    );
    const foreign = await complete(`models/${model.id}/checkpoints/other/model.safetensors`);
    expect(foreign.status).toBe(422);
    expect((await complete(weightsKey)).body).toEqual({ step: 1 });
    expect((await complete(weightsKey)).body).toEqual({ step: 1 });
    expect(
      (await api(null, 'POST', `/v1/workers/jobs/${jobId}/fail`, { worker_id: gpu, error_message: 'x' })).status,
    ).toBe(409);
    const checkpoints = await api(user, 'GET', `/v1/preview/models/${model.id}/checkpoints`);
    expect(checkpoints.body.data.map((c: { step: number }) => c.step).sort()).toEqual([0, 1]);

    // The download is a tar of the adapter folder; format=safetensors gives the weights alone.
    const tar = await routeFetch(`http://localhost/v1/preview/models/${model.id}/checkpoints/1/download`, {
      headers: { authorization: `Bearer ${user.key}` },
    });
    expect(tar.headers.get('content-type')).toBe('application/x-tar');
    const bytes = new Uint8Array(await tar.arrayBuffer());
    expect(bytes.byteLength).toBe(Number(tar.headers.get('content-length')));
    const entries = untar(bytes);
    expect(entries.map((e) => e.name)).toEqual([
      `${model.name}-step1/adapter_config.json`,
      `${model.name}-step1/adapter_model.safetensors`,
    ]);
    // The base is named so plain PEFT finds it offline: the folder it was registered with (not Tuneboard's id).
    expect(JSON.parse(new TextDecoder().decode(entries[0].data))).toEqual({
      ...JSON.parse(config),
      base_model_name_or_path: path.resolve('models/tiny-qwen3'),
    });
    expect(entries[1].data).toEqual(weights);
    const alone = await routeFetch(
      `http://localhost/v1/preview/models/${model.id}/checkpoints/1/download?format=safetensors`,
      { headers: { authorization: `Bearer ${user.key}` } },
    );
    expect(new Uint8Array(await alone.arrayBuffer())).toEqual(weights);
    const gguf = await api(user, 'GET', `/v1/preview/models/${model.id}/checkpoints/1/download?format=gguf`);
    expect(gguf.status).toBe(422);

    // The next job trains on from step 1: the weights and, by file name, the adapter config.
    const next = await api(user, 'POST', '/v1/preview/training-jobs', { model_id: model.id, trajectory_groups: [] });
    expect((await claim(gpu, model.id, { backends: ['hf'] }))?.base_checkpoint).toEqual({
      step: 1,
      artifact_key: weightsKey,
    });
    const q = `worker_id=${encodeURIComponent(gpu)}`;
    const w = await routeFetch(`http://localhost/v1/workers/jobs/${next.body.id}/weights?${q}`, { headers: worker });
    expect(new Uint8Array(await w.arrayBuffer())).toEqual(weights);
    const c = await routeFetch(
      `http://localhost/v1/workers/jobs/${next.body.id}/weights?${q}&file=adapter_config.json`,
      {
        headers: worker,
      },
    );
    expect(await c.text()).toBe(config);
    const failed = { worker_id: gpu, error_message: 'CUDA out of memory: lower batch_size' };
    expect((await api(null, 'POST', `/v1/workers/jobs/${next.body.id}/fail`, failed)).status).toBe(200);
    expect((await api(null, 'POST', `/v1/workers/jobs/${next.body.id}/fail`, failed)).status).toBe(200);
  });
});

function untar(bytes: Uint8Array): { name: string; data: Uint8Array }[] {
  const out: { name: string; data: Uint8Array }[] = [];
  let off = 0;
  while (off + 512 <= bytes.length) {
    const header = bytes.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const text = new TextDecoder().decode(header);
    const name = text.slice(0, 100).replace(/\0.*$/s, '');
    const size = parseInt(text.slice(124, 136).replace(/\0.*$/s, ''), 8);
    let sum = 0;
    header.forEach((b, i) => (sum += i >= 148 && i < 156 ? 32 : b));
    expect(parseInt(text.slice(148, 156), 8)).toBe(sum);
    out.push({ name, data: bytes.slice(off + 512, off + 512 + size) });
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}
