/**
 * node-postgres on top of the embedded database's thread (lib/db/pglite-thread.ts). `PgliteThreadClient` is a
 * `pg.Client` whose connection, instead of a socket, hands the serialised frontend messages to the thread
 * and parses the raw backend answer with pg's own protocol parser: the server uses one driver (node-postgres,
 * with its type parsing and error objects) for both databases, and the request thread never runs PostgreSQL.
 *
 * PGlite has exactly one session, so the pool over it has one client: a transaction holds it from BEGIN to
 * COMMIT and every other query waits its turn in the pool's queue, on the request thread only as a promise.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { serialize } from 'pg-protocol';
import { Parser } from 'pg-protocol/dist/parser';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { concatBytes } from './bytes';
import type { FromPgliteThread, ToPgliteThread } from './pglite-thread';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('db');

interface Pending {
  resolve: (bytes: Uint8Array) => void;
  reject: (err: Error) => void;
}

/**
 * Owns the worker thread: starts it, sends it byte batches in order, and recycles it when its WebAssembly
 * heap (which never shrinks) has grown past `recycleHeapBytes` after a burst of large rows. A recycle only
 * happens while the session is idle outside any transaction, so no client sees it; an in-memory database
 * cannot be recycled (it would be lost) and keeps its heap.
 */
export class PgliteThread {
  private worker!: Worker;
  private ready!: Promise<void>;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private heapBytes = 0;
  private recycling: Promise<void> | null = null;
  private closed = false;
  /** Heap after the last start: what a recycle brings the thread back to. */
  baselineHeapBytes = 0;
  recycles = 0;

  constructor(
    private readonly dataDir: string,
    private readonly recycleHeapBytes: number,
    /** A data-directory dump an in-memory database starts from (ignored for a directory on disk). */
    private readonly snapshot?: string,
  ) {
    this.start();
  }

  private start() {
    const bundled = path.join(process.cwd(), '.tuneboard', 'pglite-worker.mjs');
    if (!fs.existsSync(bundled)) throw new Error(`${bundled} is missing: run node scripts/build-worker.mjs`);
    const worker = new Worker(bundled, { workerData: { dataDir: this.dataDir, snapshot: this.snapshot } });
    this.worker = worker;
    worker.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromPgliteThread) => {
        if (message.type === 'ready') {
          this.heapBytes = this.baselineHeapBytes = message.heapBytes;
          resolve();
        } else if (message.type === 'fatal') {
          reject(new Error(`embedded database failed to open: ${message.message}`));
        } else if (message.type === 'result' || message.type === 'failed') {
          const p = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.type === 'result') {
            this.heapBytes = message.heapBytes;
            p?.resolve(message.bytes);
          } else {
            p?.reject(new Error(`embedded database: ${message.message}`));
          }
        }
      });
      worker.on('error', (err) => {
        log.error({ err }, 'embedded database thread error');
        reject(err);
      });
      worker.on('exit', (code) => {
        if (this.worker !== worker) return; // a recycled thread
        const err = new Error(`embedded database thread exited (${code})`);
        reject(err);
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      });
    });
    this.ready.catch(() => undefined);
  }

  waitReady(): Promise<void> {
    return this.ready;
  }

  get heap(): number {
    return this.heapBytes;
  }

  async exec(bytes: Uint8Array): Promise<Uint8Array> {
    if (this.recycling) await this.recycling;
    await this.ready;
    if (this.closed) throw new Error('embedded database is closed');
    const id = this.nextId++;
    return new Promise<Uint8Array>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ type: 'exec', id, bytes } satisfies ToPgliteThread, [bytes.buffer as ArrayBuffer]);
    });
  }

  /** Called by the connection when its session is idle outside a transaction with nothing in flight. */
  maybeRecycle(onRecycled: () => void): void {
    if (this.recycling || this.closed || this.pending.size > 0) return;
    if (this.dataDir.startsWith('memory://') || this.heapBytes <= this.recycleHeapBytes) return;
    const grown = this.heapBytes;
    this.recycling = (async () => {
      await this.stopWorker();
      this.start();
      await this.ready;
      this.recycles++;
      onRecycled();
      log.info(
        {
          heapMiB: Math.round(grown / 2 ** 20),
          limitMiB: Math.round(this.recycleHeapBytes / 2 ** 20),
          afterMiB: Math.round(this.heapBytes / 2 ** 20),
        },
        'embedded database heap over its limit: thread recycled',
      );
    })().finally(() => {
      this.recycling = null;
    });
  }

  private async stopWorker(): Promise<void> {
    const worker = this.worker;
    const closed = new Promise<void>((resolve) => {
      const onMessage = (m: FromPgliteThread) => {
        if (m.type === 'closed') {
          worker.off('message', onMessage);
          resolve();
        }
      };
      worker.on('message', onMessage);
    });
    worker.postMessage({ type: 'close' } satisfies ToPgliteThread);
    await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000))]);
    this.worker = undefined as unknown as Worker; // its exit must not fail the next thread's requests
    await worker.terminate();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.recycling) await this.recycling.catch(() => undefined);
    this.closed = true;
    await this.ready.catch(() => undefined);
    if (this.worker) await this.stopWorker();
  }
}

type Serialized = Buffer | Uint8Array;

/**
 * The subset of pg's `Connection` that `pg.Client` drives, over a PgliteThread. The session already exists
 * (there is no startup or authentication), so connect() answers ReadyForQuery at once, as pg expects.
 * Messages written in one tick (Parse, Bind, Describe, Execute, Sync of one query) go to the thread as one
 * batch: one round trip per query, not five.
 */
class PgliteThreadConnection extends EventEmitter {
  _connecting = false;
  _ending = false;
  readonly stream = { destroy: () => this.end(), cork: () => undefined, uncork: () => undefined };
  parsedStatements: Record<string, string> = {};
  submittedNamedStatements: Record<string, string> = {};
  private batch: Serialized[] = [];
  private inFlight = 0;
  private txStatus = 'I';
  private readonly parser = new Parser();
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly thread: PgliteThread) {
    super();
  }

  connect() {
    this._connecting = true;
    this.thread.waitReady().then(
      () => this.emit('readyForQuery', { name: 'readyForQuery', length: 5, status: 'I' }),
      (err) => this.emit('error', err),
    );
  }

  private send(bytes: Serialized) {
    if (this.batch.length === 0) queueMicrotask(() => this.flushBatch());
    this.batch.push(bytes);
  }

  private flushBatch() {
    const parts = this.batch;
    this.batch = [];
    if (parts.length === 0) return;
    // Serialised messages may be slices of Node's shared pool; the batch is transferred (moved) to the thread.
    const bytes = concatBytes(parts);
    this.inFlight++;
    const answer = this.thread.exec(bytes);
    // Answers are handled in the order the batches were sent, whatever order the promises settle in.
    this.chain = this.chain
      .then(() => answer)
      .then(
        (out) => {
          this.inFlight--;
          if (out.byteLength > 0) {
            this.parser.parse(Buffer.from(out.buffer, out.byteOffset, out.byteLength), (msg) => this.dispatch(msg));
          }
          if (this.inFlight === 0 && this.batch.length === 0 && this.txStatus === 'I') {
            this.thread.maybeRecycle(() => {
              // A fresh session knows none of the old one's named statements.
              this.parsedStatements = {};
            });
          }
        },
        (err: Error) => {
          this.inFlight--;
          this.emit('error', err);
          this.end();
        },
      );
  }

  private dispatch(msg: BackendMessage) {
    if (msg.name === 'readyForQuery') this.txStatus = (msg as unknown as { status: string }).status;
    this.emit('message', msg);
    this.emit(msg.name === 'error' ? 'errorMessage' : msg.name, msg);
  }

  requestSsl() {}
  startup() {}
  cancel() {}
  password() {}
  sendSASLInitialResponseMessage(mechanism: string, initialResponse: string) {
    this.send(serialize.sendSASLInitialResponseMessage(mechanism, initialResponse));
  }
  sendSCRAMClientFinalMessage(additionalData: string) {
    this.send(serialize.sendSCRAMClientFinalMessage(additionalData));
  }
  query(text: string) {
    this.send(serialize.query(text));
  }
  parse(query: Parameters<typeof serialize.parse>[0]) {
    this.send(serialize.parse(query));
  }
  bind(config: Parameters<typeof serialize.bind>[0]) {
    this.send(serialize.bind(config));
  }
  execute(config: Parameters<typeof serialize.execute>[0]) {
    this.send(serialize.execute(config));
  }
  flush() {
    this.send(serialize.flush());
  }
  sync() {
    this.send(serialize.sync());
  }
  close(msg: Parameters<typeof serialize.close>[0]) {
    this.send(serialize.close(msg));
  }
  describe(msg: Parameters<typeof serialize.describe>[0]) {
    this.send(serialize.describe(msg));
  }
  sendCopyFromChunk(chunk: Buffer) {
    this.send(serialize.copyData(chunk));
  }
  endCopyFrom() {
    this.send(serialize.copyDone());
  }
  sendCopyFail(msg: string) {
    this.send(serialize.copyFail(msg));
  }
  end() {
    if (this._ending) return;
    this._ending = true;
    // Let queued answers land first; the session itself stays open for the next client.
    void this.chain.then(() => this.emit('end'));
  }
  ref() {}
  unref() {}
}

/** Builds the pg.Client subclass a Pool uses (`new Pool({ Client })`) for one PgliteThread. */
export function pgliteClientClass(thread: PgliteThread): typeof pg.Client {
  return class PgliteThreadClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connection: new PgliteThreadConnection(thread) } as pg.ClientConfig);
    }
  };
}
