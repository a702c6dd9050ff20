import type { z } from 'zod';
import {
  appendEventsResponseSchema,
  checkpointUploadResponseSchema,
  claimResponseSchema,
  completeResponseSchema,
  failResponseSchema,
  heartbeatResponseSchema,
  jobInputSchema,
} from '@/lib/schemas/workers';
import type { WorkerEvent, WorkerProtocol } from '../protocol';

/** A final (4xx) answer of the server to one of the worker's calls. */
export class WorkerHttpError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    text: string,
  ) {
    super(`${method} ${path} answered ${status}: ${text.slice(0, 500)}`);
    this.name = 'WorkerHttpError';
  }
}

/** A 2xx answer that is not what the route declares (another server version, a proxy's page). */
export class WorkerAnswerError extends Error {
  constructor(method: string, path: string, problem: string) {
    super(`${method} ${path} answered something other than its contract: ${problem}`);
    this.name = 'WorkerAnswerError';
  }
}

/**
 * The worker protocol over HTTP, for `npm run worker`, the built-in runner's child process and external GPU
 * machines. Transient failures (connection errors, 5xx) are retried with backoff; 4xx answers are final.
 */
export function httpProtocol(opts: {
  baseUrl: string;
  token: string;
  workerId: string;
  fetchImpl?: typeof fetch;
}): WorkerProtocol {
  const f = opts.fetchImpl ?? fetch;
  const base = opts.baseUrl.replace(/\/+$/, '');
  const auth = { authorization: `Bearer ${opts.token}` };

  async function request(
    method: string,
    path: string,
    body?: Uint8Array | object,
    signal?: AbortSignal,
  ): Promise<Response> {
    const isJson = body !== undefined && !(body instanceof Uint8Array) && typeof body === 'object';
    for (let attempt = 0; ; attempt++) {
      let res: Response | undefined;
      try {
        res = await f(`${base}${path}`, {
          method,
          headers: {
            ...auth,
            ...(isJson ? { 'content-type': 'application/json' } : { 'content-type': 'application/octet-stream' }),
          },
          body: body === undefined ? undefined : isJson ? JSON.stringify(body) : (body as BodyInit),
          signal,
        });
      } catch (err) {
        if (attempt >= 5 || signal?.aborted) throw err;
      }
      if (res && res.status < 500) {
        if (!res.ok) {
          throw new WorkerHttpError(method, path.split('?')[0], res.status, await res.text());
        }
        return res;
      }
      if (res && attempt >= 5) throw new Error(`${method} ${path} answered ${res.status}`);
      await new Promise((r) => setTimeout(r, Math.min(8000, 250 * 2 ** attempt)));
    }
  }
  /**
   * The answer, parsed with the route's own response schema: a server of another version, or a proxy's page in
   * its place, is an error naming the route and the field rather than a job run on half-read data.
   */
  async function parsed<S extends z.ZodType>(schema: S, method: string, path: string, res: Response) {
    const text = await res.text();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new WorkerAnswerError(method, path, `not JSON: ${text.slice(0, 200)}`);
    }
    const result = schema.safeParse(value);
    if (!result.success) {
      const issue = result.error.issues[0];
      throw new WorkerAnswerError(method, path, `${issue.path.join('.') || '(the answer)'}: ${issue.message}`);
    }
    return result.data as z.output<S>;
  }
  const json = async <S extends z.ZodType>(
    schema: S,
    method: string,
    path: string,
    body?: object,
    signal?: AbortSignal,
  ): Promise<z.output<S>> => parsed(schema, method, path.split('?')[0], await request(method, path, body, signal));
  const q = `worker_id=${encodeURIComponent(opts.workerId)}`;
  // Events sent per job: the batch's seq, so a retry after a lost answer is skipped, not duplicated.
  const sent = new Map<string, number>();

  return {
    workerId: opts.workerId,
    async signOff() {
      // One short try, no retries: the worker is exiting (perhaps because the server is), and a worker that could
      // not sign off just ages out of the registry as before.
      await f(`${base}/v1/workers/sign-off`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ worker_id: opts.workerId }),
        signal: AbortSignal.timeout(2000),
      }).then(
        (res) => res.body?.cancel(),
        () => undefined,
      );
    },
    async claim(kinds, modelIds, wait) {
      const body = { worker_id: opts.workerId, kinds, model_ids: modelIds, wait_seconds: wait?.seconds };
      return (await json(claimResponseSchema, 'POST', '/v1/workers/claim', body, wait?.signal)).job;
    },
    heartbeat: (jobId) =>
      json(heartbeatResponseSchema, 'POST', `/v1/workers/jobs/${jobId}/heartbeat`, { worker_id: opts.workerId }),
    async appendEvents(jobId, events: WorkerEvent[]) {
      const seq = sent.get(jobId) ?? 0;
      await json(appendEventsResponseSchema, 'POST', `/v1/workers/jobs/${jobId}/events`, {
        worker_id: opts.workerId,
        events,
        seq,
      });
      sent.set(jobId, seq + events.length);
    },
    input: (jobId) => json(jobInputSchema, 'GET', `/v1/workers/jobs/${jobId}/input?${q}`),
    async baseWeights(job) {
      const res = await request('GET', `/v1/workers/jobs/${job.id}/weights?${q}`);
      return res.status === 204 ? null : new Uint8Array(await res.arrayBuffer());
    },
    async uploadCheckpoint(jobId, weights) {
      const path = `/v1/workers/jobs/${jobId}/checkpoint`;
      const res = await request('PUT', `${path}?${q}`, weights);
      return (await parsed(checkpointUploadResponseSchema, 'PUT', path, res)).artifact_key;
    },
    async complete(jobId, result) {
      sent.delete(jobId);
      return json(completeResponseSchema, 'POST', `/v1/workers/jobs/${jobId}/complete`, {
        worker_id: opts.workerId,
        artifact_key: result.artifactKey,
        metrics: result.metrics,
      });
    },
    async fail(jobId, message) {
      sent.delete(jobId);
      await json(failResponseSchema, 'POST', `/v1/workers/jobs/${jobId}/fail`, {
        worker_id: opts.workerId,
        error_message: message,
      });
    },
  };
}
