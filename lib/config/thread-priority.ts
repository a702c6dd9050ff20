import os from 'node:os';
import { componentLogger } from '@/lib/logger';
import { config } from './index';

/**
 * Schedules the calling worker thread below the request thread. The server's helper threads (the built-in
 * engine's, the embedded database's, the large-body parser's) do long stretches of CPU work; when they and the
 * request thread want more cores than there are, Linux shares them out evenly, and every request, health
 * check and stream chunk waits in line behind a thread computing something nobody is waiting on yet. With the
 * helpers a few nice levels down (TUNEBOARD_THREAD_NICE, 5: about a third of the request thread's share when
 * both want one core) the request thread runs first, and they still get every cycle it leaves.
 *
 * On Linux a nice value belongs to a thread, and setpriority() on "process 0" sets the caller's own, which is
 * what os.setPriority(0, …) does from a worker thread. Raising one's own nice value needs no privilege.
 * Elsewhere (or where it is refused) the thread keeps its priority.
 */
export function lowerThisThreadPriority(): void {
  if (config.threadNice <= 0 || process.platform !== 'linux') return;
  try {
    os.setPriority(0, Math.max(os.getPriority(0), config.threadNice));
  } catch (err) {
    componentLogger('threads').debug({ err: (err as Error).message }, 'thread priority left unchanged');
  }
}
