/**
 * The worker thread that owns the embedded database (bundled to .tuneboard/pglite-worker.mjs by
 * scripts/build-worker.mjs). PGlite runs PostgreSQL inside WebAssembly on whatever thread calls it, so on the
 * request thread every query stalls every other request, health checks and chat streams included. Here it
 * gets a thread of its own: the server sends raw frontend-protocol bytes (what node-postgres writes to a
 * socket) and gets the backend's raw answer back, so the server talks to PGlite with the same driver and
 * the same SQL as to a PostgreSQL server (lib/db/pglite-connection.ts).
 *
 * Messages are executed strictly in arrival order: PGlite has one session, and the bytes of one transaction
 * must never interleave with another's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { lowerThisThreadPriority } from '@/lib/config/thread-priority';
import { concatBytes } from '@/lib/bytes';

export type ToPgliteThread = { type: 'exec'; id: number; parts: Uint8Array[] } | { type: 'close' };
export type FromPgliteThread =
  /** `initialized`: the directory was empty and PGlite ran initdb in this thread (see PgliteThread.start). */
  | { type: 'ready'; heapBytes: number; initialized: boolean }
  | { type: 'result'; id: number; bytes: Uint8Array; heapBytes: number }
  | { type: 'failed'; id: number; message: string }
  | { type: 'fatal'; message: string }
  | { type: 'closed' };

const port = parentPort!;
lowerThisThreadPriority();
const { dataDir, snapshot } = workerData as { dataDir: string; snapshot?: string };

/**
 * PostgreSQL's planner prices a random page read at four sequential ones (random_page_cost 4), a figure for
 * spinning disks. Here every page is in the WebAssembly heap or the OS's page cache, so an index probe costs
 * what a sequential read does, and 1.1 (the usual setting for SSDs) says so. With 4, a table of up to a few
 * hundred rows was read whole instead of probed: the model list's best-checkpoint subqueries (one per listed
 * model, lib/db/repositories/best-metrics.ts) then evaluated the metrics jsonb of every checkpoint, 1.3 to 5.5 ms
 * per model with 100 checkpoints against 0.1 to 0.3 ms through their index, which halved the list's requests/s.
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'random_page_cost=1.1'];

function heapBytes(db: PGlite): number {
  // The WebAssembly memory only grows; the server recycles this thread when it grows past its cap.
  return db.Module.HEAPU8.buffer.byteLength;
}

async function main() {
  let db: PGlite;
  const inMemory = dataDir.startsWith('memory://');
  const initializing = !inMemory && !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  try {
    // Starting from a dump skips initdb (about 3 s), which matters where many in-memory databases are made.
    const loadDataDir = snapshot && inMemory ? new Blob([fs.readFileSync(snapshot)]) : undefined;
    db = await PGlite.create(dataDir, { ...(loadDataDir ? { loadDataDir } : {}), startParams: START_PARAMS });
  } catch (err) {
    port.postMessage({
      type: 'fatal',
      message: err instanceof Error ? err.message : String(err),
    } satisfies FromPgliteThread);
    return;
  }
  port.postMessage({ type: 'ready', heapBytes: heapBytes(db), initialized: initializing } satisfies FromPgliteThread);

  let chain: Promise<void> = Promise.resolve();
  port.on('message', (message: ToPgliteThread) => {
    chain = chain.then(async () => {
      if (message.type === 'close') {
        await db.close().catch(() => undefined);
        port.postMessage({ type: 'closed' } satisfies FromPgliteThread);
        return;
      }
      try {
        // The streaming form hands over the backend's bytes as they are written. execProtocolRaw would also run
        // PGlite's own protocol parser over every answer (for its execProtocol API, which this thread never
        // uses): up to half of this thread's time on pages of rows, for objects nobody reads, since the server
        // parses the same bytes with node-postgres. Chunks are views into the WebAssembly heap: copied at once.
        const chunks: Uint8Array[] = [];
        const input = message.parts.length === 1 ? message.parts[0] : concatBytes(message.parts);
        await db.execProtocolRawStream(input, { onRawData: (chunk) => chunks.push(chunk.slice()) });
        const bytes = chunks.length === 1 ? chunks[0] : concatBytes(chunks);
        port.postMessage(
          { type: 'result', id: message.id, bytes, heapBytes: heapBytes(db) } satisfies FromPgliteThread,
          bytes.byteLength === bytes.buffer.byteLength ? [bytes.buffer as ArrayBuffer] : [],
        );
      } catch (err) {
        port.postMessage({
          type: 'failed',
          id: message.id,
          message: err instanceof Error ? err.message : String(err),
        } satisfies FromPgliteThread);
      }
    });
  });
}

void main();
