import 'server-only';
import { pingDb } from '@/lib/db/client';
import { queueStats } from '@/lib/jobs/server/queue';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('health');

interface CheckResult {
  success: boolean;
  duration: number;
  error: string | null;
}

const TIMEOUT_MS = 5_000;

async function timed(check: () => Promise<void>): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
      }),
    ]);
    return { success: true, duration: (performance.now() - started) / 1000, error: null };
  } catch (err) {
    log.error({ err }, 'system check failed');
    // Only a short, known reason is echoed: this route is public.
    const reason = err instanceof Error && err.message.startsWith('timed out') ? err.message : 'check failed';
    return { success: false, duration: (performance.now() - started) / 1000, error: reason };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * /v1/system-check (docs/contract.md §6). The database check is a trivial query. Both queues are the one
 * database-backed job queue in this build (bookkeeping and training work share it; there are no GPU workers
 * of a separate kind), so each queue check is a read of the queue's own table and index.
 */
export async function systemCheck() {
  const database = await timed(pingDb);
  const cpuQueue = await timed(async () => void (await queueStats()));
  const gpuQueue = await timed(async () => void (await queueStats()));
  const body = { api: true, database: database.success, cpu_queue: cpuQueue, gpu_queue: gpuQueue };
  const ok = database.success && cpuQueue.success && gpuQueue.success;
  return { ok, body };
}
