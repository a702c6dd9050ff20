import { expect } from 'vitest';
import { bootWorkerToken } from '@/lib/jobs/server/worker-token';
import { uniqueName, type TestUser } from '../support/helpers';
import { useBaseModels } from '../support/base-models';
import { routeFetch } from '../support/route-fetch';

/**
 * The Tinker API in process (docs/tinker.md): calls as the SDK makes them (X-API-Key: tml-<key>), and a scripted
 * worker that speaks the worker protocol of docs/tinker.md §3 in its place, so the server's ordering, futures and
 * bookkeeping are tested without PyTorch. workers/python/tests runs the real worker against a real server.
 */

/** A base-models file with one Hugging Face model beside the built-in ones. */
export const HF_BASE = 'test-org/tiny-qwen3';
export function useHfBaseModels(): void {
  useBaseModels([{ id: HF_BASE, backend: 'hf', path: 'models/tiny-qwen3' }]);
}

export interface Answer<T = any> {
  status: number;
  body: T;
  raw: Uint8Array;
  headers: Headers;
}

async function send(url: string, init: RequestInit): Promise<Answer> {
  const res = await routeFetch(`http://localhost${url}`, init);
  const raw = new Uint8Array(await res.arrayBuffer());
  let body: unknown = undefined;
  if (res.headers.get('content-type')?.includes('json')) body = JSON.parse(Buffer.from(raw).toString('utf8'));
  return { status: res.status, body, raw, headers: res.headers };
}

/** A call as the SDK makes it. */
export function tinker(
  user: TestUser | null,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return send(url, {
    method,
    headers: {
      ...(user ? { 'x-api-key': `tml-${user.key}` } : {}),
      ...(body !== undefined && !(body instanceof Uint8Array) ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : body instanceof Uint8Array ? (body as BodyInit) : JSON.stringify(body),
  });
}

export async function ok<T = any>(p: Promise<Answer<T>>): Promise<T> {
  const a = await p;
  expect(a.status, JSON.stringify(a.body)).toBe(200);
  return a.body;
}

export function workerCall(method: string, url: string, body?: unknown, raw?: Uint8Array) {
  return send(url, {
    method,
    headers: {
      authorization: `Bearer ${bootWorkerToken()}`,
      'content-type': raw ? 'application/octet-stream' : 'application/json',
    },
    body: raw ? (raw as BodyInit) : body === undefined ? undefined : JSON.stringify(body),
  });
}

export interface PolledRequest {
  request_id: string;
  model_id: string;
  seq_id: number | null;
  kind: string;
  payload: Record<string, any>;
}

/** A worker the test drives by hand: it polls, and answers what it is handed as the test says. */
export class ScriptedWorker {
  readonly id = uniqueName('tinker-worker:');
  held: string[] = [];

  async poll(
    opts: { acceptNew?: boolean; waitMs?: number } = {},
  ): Promise<{ requests: PolledRequest[]; drop: string[] }> {
    const a = await workerCall('POST', '/v1/workers/tinker/poll', {
      worker_id: this.id,
      capabilities: { backends: ['hf'] },
      kinds: ['tinker'],
      held: this.held,
      accept_new: opts.acceptNew ?? true,
      wait_ms: opts.waitMs ?? 0,
    });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    this.held = this.held.filter((id) => !a.body.drop.includes(id));
    return a.body;
  }

  async answer(requestId: string, result: Record<string, unknown>) {
    return workerCall('POST', `/v1/workers/tinker/requests/${requestId}/result`, { worker_id: this.id, result });
  }

  async fail(requestId: string, message: string, category: 'user' | 'server' = 'user') {
    return workerCall('POST', `/v1/workers/tinker/requests/${requestId}/result`, {
      worker_id: this.id,
      error: { message, category },
    });
  }

  async upload(requestId: string, file: string, bytes: Uint8Array) {
    return workerCall(
      'PUT',
      `/v1/workers/tinker/requests/${requestId}/files/${file}?worker_id=${encodeURIComponent(this.id)}`,
      undefined,
      bytes,
    );
  }

  async download(requestId: string, file: string) {
    return workerCall(
      'GET',
      `/v1/workers/tinker/requests/${requestId}/files/${file}?worker_id=${encodeURIComponent(this.id)}`,
    );
  }

  /** Takes the create_model waiting for a worker and answers it; the training client is then this worker's. */
  async takeCreate(modelId: string): Promise<void> {
    const { requests } = await this.poll({ acceptNew: true });
    const create = requests.find((r) => r.kind === 'create_model' && r.model_id === modelId);
    expect(create, JSON.stringify(requests)).toBeDefined();
    this.held.push(modelId);
    const a = await this.answer(create!.request_id, { trainable_parameters: 1000, target_modules: ['q_proj'] });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
  }
}

/** A tensor in the internal wire form (docs/tinker.md §3.1). */
export function wireTensor(values: number[], dtype: 'float32' | 'int64' | 'int32' = 'float32', shape?: number[]) {
  const buf =
    dtype === 'float32'
      ? Buffer.from(new Float32Array(values).buffer)
      : dtype === 'int32'
        ? Buffer.from(new Int32Array(values).buffer)
        : Buffer.from(new BigInt64Array(values.map(BigInt)).buffer);
  return { dtype, shape: shape ?? [values.length], data: buf.toString('base64') };
}

/** A forward result for `n` datums of `len` tokens each. */
export function forwardResult(n: number, len: number, loss = 1.5) {
  return {
    loss_fn_outputs: Array.from({ length: n }, () => ({ logprobs: wireTensor(Array(len).fill(-0.5)) })),
    metrics: { 'loss:sum': loss },
    stats: { loss_sum: loss, num_sequences: n, num_tokens: n * len, num_loss_tokens: n * len, seconds: 0.01 },
  };
}

/** A JSON-era datum (SDK ≤ 0.24): N tokens with cross_entropy targets and weights. */
export function ceDatum(tokens: number[]) {
  return {
    model_input: { chunks: [{ type: 'encoded_text', tokens }] },
    loss_fn_inputs: {
      target_tokens: { data: tokens.map((t) => t + 1), dtype: 'int64', shape: [tokens.length] },
      weights: { data: tokens.map(() => 1), dtype: 'float32', shape: [tokens.length] },
    },
  };
}

export function forwardBackwardBody(
  modelId: string,
  seqId: number | null,
  data = [ceDatum([1, 2, 3])],
  lossFn = 'cross_entropy',
) {
  return {
    forward_backward_input: { data, loss_fn: lossFn, loss_fn_config: null },
    model_id: modelId,
    ...(seqId === null ? {} : { seq_id: seqId }),
  };
}

/** A session and a training client on HF_BASE, held by `worker`. */
export async function trainingClient(
  user: TestUser,
  worker: ScriptedWorker,
  lora: Record<string, unknown> = { rank: 8 },
) {
  const session = await ok(
    tinker(user, 'POST', '/api/v1/create_session', { tags: [], user_metadata: null, sdk_version: '0.25.0' }),
  );
  const created = await ok(
    tinker(user, 'POST', '/api/v1/create_model', {
      session_id: session.session_id,
      model_seq_id: 0,
      base_model: HF_BASE,
      lora_config: lora,
    }),
  );
  await worker.takeCreate(created.model_id);
  const done = await ok(tinker(user, 'POST', '/api/v1/retrieve_future', { request_id: created.request_id }));
  expect(done).toEqual({ type: 'create_model', model_id: created.model_id });
  return { sessionId: session.session_id as string, modelId: created.model_id as string };
}
