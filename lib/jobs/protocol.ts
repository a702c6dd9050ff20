import type { JobInput, WorkerEvent, WorkerJob } from '@/lib/schemas/workers';

/**
 * The worker contract: a claimed job (`WorkerJob`), its input (`JobInput`) and the events a worker reports
 * (`WorkerEvent`) are the zod schemas of lib/schemas/workers.ts, which the worker routes validate with and the HTTP
 * protocol parses every answer through; the types are derived from them, never written twice. A job's `config` is
 * checked per kind by its handler (resolvedSftConfigSchema, resolvedRlConfigSchema), which names what is wrong.
 */
export type { JobInput, WorkerEvent, WorkerJob };

/**
 * What a training worker can do with a job. The built-in runner and external GPU workers use the same
 * operations: in-process (direct calls, `in-process-protocol.ts`) or over HTTP (`http-protocol.ts`,
 * the routes under /v1/workers). A worker holds a job by lease; every call after losing it fails.
 */
export interface WorkerProtocol {
  readonly workerId: string;
  /**
   * The next job, or null. `wait.seconds`: a long poll (the server holds the answer until a job can be claimed, at
   * most 25 s); `wait.signal` ends it early (the worker is stopping).
   */
  claim(
    kinds?: ('rl' | 'sft')[],
    modelIds?: string[],
    wait?: { seconds: number; signal?: AbortSignal },
  ): Promise<WorkerJob | null>;
  heartbeat(jobId: string): Promise<{ cancelled: boolean }>;
  appendEvents(jobId: string, events: WorkerEvent[]): Promise<void>;
  input(jobId: string): Promise<JobInput>;
  /** The weights to train from (safetensors bytes), or null when the job starts from the base model. */
  baseWeights(job: WorkerJob): Promise<Uint8Array | null>;
  /** Stores the trained weights; the returned key is passed to complete(). */
  uploadCheckpoint(jobId: string, weights: Uint8Array): Promise<string>;
  complete(jobId: string, result: { artifactKey: string; metrics?: Record<string, number> }): Promise<{ step: number }>;
  fail(jobId: string, message: string): Promise<void>;
  /** Leaving cleanly: the server drops the worker from its registry at once (one try, never throws). */
  signOff?(): Promise<void>;
}

export function checkpointKey(modelId: string, jobId: string): string {
  return `models/${modelId}/checkpoints/${jobId}/model.safetensors`;
}

/**
 * A LoRA checkpoint of a Hugging Face model: PEFT's two files side by side. The checkpoint row's artifact_key
 * is the weights file's key; readers find the config by replacing the file name.
 */
export function adapterKeys(modelId: string, jobId: string): { weights: string; config: string } {
  const prefix = `models/${modelId}/checkpoints/${jobId}`;
  return { weights: `${prefix}/adapter_model.safetensors`, config: `${prefix}/adapter_config.json` };
}
