import type { WorkerProtocol } from '@/lib/jobs/protocol';

/**
 * Pins a protocol to one model's jobs: on PostgreSQL, test files run in parallel on one queue, and a test
 * must never take (or disturb) another file's jobs.
 */
export function claimOnly(protocol: WorkerProtocol, modelId: string): WorkerProtocol {
  return { ...protocol, claim: (kinds) => protocol.claim(kinds, [modelId]) };
}
