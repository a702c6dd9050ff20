import type { JobInput, WorkerEvent, WorkerJob } from './queue';

/**
 * What a training worker can do with a job. The built-in runner and external GPU workers use the same
 * operations: in-process (direct calls, `in-process-protocol.ts`) or over HTTP (`http-protocol.ts`,
 * the routes under /v1/workers). A worker holds a job by lease; every call after losing it fails.
 */
export interface WorkerProtocol {
  readonly workerId: string;
  claim(kinds?: ('rl' | 'sft')[], modelIds?: string[]): Promise<WorkerJob | null>;
  heartbeat(jobId: string): Promise<{ cancelled: boolean }>;
  appendEvents(jobId: string, events: WorkerEvent[]): Promise<void>;
  input(jobId: string): Promise<JobInput>;
  /** The weights to train from (safetensors bytes), or null when the job starts from the base model. */
  baseWeights(job: WorkerJob): Promise<Uint8Array | null>;
  /** Stores the trained weights; the returned key is passed to complete(). */
  uploadCheckpoint(jobId: string, weights: Uint8Array): Promise<string>;
  complete(jobId: string, result: { artifactKey: string; metrics?: Record<string, number> }): Promise<{ step: number }>;
  fail(jobId: string, message: string): Promise<void>;
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
