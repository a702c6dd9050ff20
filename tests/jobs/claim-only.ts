import { getDb } from '@/lib/db/client';
import * as trainingRepo from '@/lib/db/repositories/training';
import type { WorkerProtocol } from '@/lib/jobs/protocol';

/**
 * Wraps a protocol so that it only ever takes `jobId`: on PostgreSQL, test files run in parallel on one
 * queue, and a job of another file that we happen to claim is put back exactly as it was.
 */
export function claimOnly(protocol: WorkerProtocol, jobId: string): WorkerProtocol {
  return {
    ...protocol,
    async claim(kinds) {
      for (let i = 0; i < 100; i++) {
        const job = await protocol.claim(kinds);
        if (!job || job.id === jobId) return job;
        await trainingRepo.updateJob(await getDb(), job.id, { status: 'QUEUED', workerId: null, heartbeatAt: null });
      }
      return null;
    },
  };
}
