import { putArtifact, readArtifactBytes } from '@/lib/storage';
import { checkpointKey, type WorkerProtocol } from '@/lib/jobs/protocol';
import * as queue from '@/lib/jobs/server/queue';
import { loadTrainingExamples } from '@/lib/services/datasets';

/**
 * The worker protocol as direct calls into the queue, so tests run a worker's whole job path in one process
 * (production workers always go through the HTTP routes, lib/jobs/worker/http-protocol.ts).
 */
export function inProcessProtocol(workerId: string): WorkerProtocol {
  const modelOf = new Map<string, string>();
  return {
    workerId,
    async claim(kinds, modelIds) {
      const job = await queue.claimJob(workerId, kinds, modelIds);
      if (job) modelOf.set(job.id, job.model_id);
      return job;
    },
    heartbeat: (jobId) => queue.heartbeat(jobId, workerId),
    async appendEvents(jobId, events) {
      await queue.appendEvents(jobId, workerId, events);
    },
    input: (jobId) => queue.jobInput(jobId, workerId, loadTrainingExamples),
    async baseWeights(job) {
      const key = job.base_checkpoint?.artifact_key;
      return key ? ((await readArtifactBytes(key)) ?? null) : null;
    },
    async uploadCheckpoint(jobId, weights) {
      const key = checkpointKey(modelOf.get(jobId) ?? 'unknown', jobId);
      await putArtifact(key, weights);
      return key;
    },
    complete: (jobId, result) => queue.completeJob(jobId, workerId, result),
    fail: (jobId, message) => queue.failJob(jobId, workerId, message),
  };
}
