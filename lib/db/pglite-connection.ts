/**
 * node-postgres on top of the embedded database's thread (lib/db/pglite-thread.ts). `PgliteThreadClient` is a
 * `pg.Client` whose connection, instead of a socket, hands the serialised frontend messages to the thread
 * and parses the raw backend answer with pg's own protocol parser: the server uses one driver (node-postgres,
 * with its type parsing and error objects) for both databases, and the request thread never runs PostgreSQL.
 *
 * PGlite has exactly one session, shared by every client of the pool over it (`PglitePool`). The thread runs the
 * batches it is sent one after another, and each query's batch ends with Sync, so queries from several clients
 * can be in flight at once without mixing: the thread starts the next while the request thread is still
 * parsing the last answer. A transaction cannot share the session: while a client taken with `pool.connect()`
 * is out, every other client's batches wait (`PgliteThread.hold`), on the request thread only as a promise.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { serialize } from 'pg-protocol';
import { Parser } from 'pg-protocol/dist/parser';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { inTurn } from '@/lib/event-loop/turns';
import { packForTransfer } from './bytes';
import type { FromPgliteThread, ToPgliteThread } from './pglite-thread';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('db');

/**
 * When a grown heap under the cap is recycled: 96 MiB over the heap the thread started with (188 MiB on a fresh
 * thread; everyday queries grow it by a few MiB, a burst of large rows by over a hundred), after 0.5 s in which
 * no query ran.
 */
const IDLE_RECYCLE = { growthBytes: 96 * 2 ** 20, quietMs: 500 };
/** Serialised messages this large go to the thread as they are (see packForTransfer); smaller ones are gathered. */
const MOVE_AT = 256 * 1024;

interface Pending {
  resolve: (bytes: Uint8Array) => void;
  reject: (err: Error) => void;
}

/**
 * Owns the worker thread: starts it, sends it byte batches in order, and recycles it when its WebAssembly
 * heap (which never shrinks) has grown after a burst of large rows: at once past `recycleHeapBytes`, and after a
 * quiet moment past its start-up size plus `idleRecycle.growthBytes`. A recycle only happens while the session
 * is idle outside any transaction, so no client sees it; an in-memory database cannot be recycled (it would be
 * lost) and keeps its heap.
 */
export class PgliteThread {
  private worker!: Worker;
  private ready!: Promise<void>;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private heapBytes = 0;
  private recycling: Promise<void> | null = null;
  private closed = false;
  /** The connection that has the session to itself (a transaction's), or null while queries may interleave. */
  private holder: PgliteThreadConnection | null = null;
  /** Other connections with a batch to send, waiting for the holder to let go (in the order they asked). */
  private readonly parked: PgliteThreadConnection[] = [];
  /** Every connection on this session: a recycle resets what each has prepared. */
  readonly connections = new Set<PgliteThreadConnection>();
  /** Heap after the last start: what a recycle brings the thread back to. */
  baselineHeapBytes = 0;
  recycles = 0;
  /** Whether the thread was started again after creating the database (see start()). */
  restartedAfterInitdb = false;
  /** When a batch was last sent or answered: an idle recycle waits for `idleRecycle.quietMs` of nothing. */
  private lastActivity = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly recycleHeapBytes: number,
    /** A data-directory dump an in-memory database starts from (ignored for a directory on disk). */
    private readonly snapshot?: string,
    private readonly idleRecycle = IDLE_RECYCLE,
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
          // initdb runs in a WebAssembly instance of its own, which PGlite keeps for as long as the thread lives: a
          // server's first start on an empty directory held about 890 MiB for as long as it ran, where any later
          // start holds 380. A fresh thread on the directory initdb has just filled starts without it (now 450 MiB;
          // 1.6 s more, once per installation).
          if (message.initialized) {
            this.restartedAfterInitdb = true;
            this.restartWorker().then(resolve, reject);
            return;
          }
          this.heapBytes = this.baselineHeapBytes = message.heapBytes;
          resolve();
        } else if (message.type === 'fatal') {
          reject(new Error(`embedded database failed to open: ${message.message}`));
        } else if (message.type === 'result' || message.type === 'failed') {
          const p = this.pending.get(message.id);
          this.pending.delete(message.id);
          this.lastActivity = performance.now();
          if (message.type === 'result') {
            this.heapBytes = message.heapBytes;
            // Answers that arrived together are taken up a few per turn (lib/event-loop/turns.ts): each resumes a handler.
            inTurn(() => p?.resolve(message.bytes));
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

  /** Runs `parts` (one batch of protocol messages, in order), moving the buffers in `transfer` to the thread. */
  async exec(parts: Uint8Array[], transfer: ArrayBuffer[]): Promise<Uint8Array> {
    if (this.recycling) await this.recycling;
    await this.ready;
    if (this.closed) throw new Error('embedded database is closed');
    this.lastActivity = performance.now();
    const id = this.nextId++;
    return new Promise<Uint8Array>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ type: 'exec', id, parts } satisfies ToPgliteThread, transfer);
    });
  }

  /** Batches sent to the thread and not yet answered (more than one while queries are pipelined). */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Gives the session to `owner` alone until `letGo(owner)`: its BEGIN runs after every batch already sent, and
   * other connections' batches wait until it lets go, so no statement runs inside someone else's transaction.
   */
  hold(owner: PgliteThreadConnection): void {
    if (this.holder && this.holder !== owner) throw new Error('embedded database session is already held');
    this.holder = owner;
  }

  letGo(owner: PgliteThreadConnection): void {
    if (this.holder !== owner) return;
    this.holder = null;
    for (const connection of this.parked.splice(0)) connection.resume();
    // The end of a transaction is the first moment a heap it grew may be given back.
    this.maybeRecycle();
  }

  /** Whether `connection` may send now; if not, it is resumed once the holder lets go. */
  maySend(connection: PgliteThreadConnection): boolean {
    if (this.holder === null || this.holder === connection) return true;
    this.parked.push(connection);
    return false;
  }

  /** Called by a connection whose answer just landed: recycles when the whole session is idle. */
  maybeRecycle(): void {
    if (!this.recyclable()) return;
    if (this.heapBytes > this.recycleHeapBytes) return this.recycle('over its limit');
    if (this.grownPastStart()) this.recycleOnceQuiet();
  }

  /** Grown by more than `idleRecycle.growthBytes` since the thread started: given back at a quiet moment. */
  private grownPastStart(): boolean {
    return this.heapBytes > this.baselineHeapBytes + this.idleRecycle.growthBytes;
  }

  /** Nothing in flight, waiting or inside a transaction, on a database that outlives its thread. */
  private recyclable(): boolean {
    if (this.recycling || this.closed || this.pending.size > 0 || this.holder || this.parked.length > 0) return false;
    if (this.dataDir.startsWith('memory://')) return false;
    for (const c of this.connections) if (!c.idle) return false;
    return true;
  }

  /**
   * A heap grown by a burst but under the cap is given back once nothing has run for `quietMs`: after a burst of
   * 64 MiB trajectory logs it stayed 140 MiB over its start-up size (most of it resident) for as long as the server
   * ran. The recycle makes queries wait about 0.8 s on this 2-core machine, so it waits for a moment when none is
   * asking; a busy server keeps its heap until the cap. A batch sent meanwhile only delays it: the next answer
   * re-arms the timer.
   */
  private recycleOnceQuiet(): void {
    if (this.idleTimer) return;
    const check = () => {
      this.idleTimer = undefined;
      if (!this.recyclable() || !this.grownPastStart()) return;
      const quietFor = performance.now() - this.lastActivity;
      if (quietFor >= this.idleRecycle.quietMs) return this.recycle('grown while idle');
      this.idleTimer = setTimeout(check, this.idleRecycle.quietMs - quietFor).unref();
    };
    this.idleTimer = setTimeout(check, this.idleRecycle.quietMs).unref();
  }

  private recycle(reason: string): void {
    const grown = this.heapBytes;
    const baseline = this.baselineHeapBytes;
    // A fresh session knows none of the old one's named statements. Forgotten now, before the restart, not after
    // it: a query pg composes meanwhile (its batch waits in exec for the new thread) must carry its Parse, and pg
    // leaves it out for a statement it still believes prepared ("prepared statement … does not exist" once sent).
    for (const c of this.connections) c.forgetStatements();
    this.recycling = (async () => {
      await this.restartWorker();
      this.recycles++;
      log.info(
        {
          heapMiB: Math.round(grown / 2 ** 20),
          startedAtMiB: Math.round(baseline / 2 ** 20),
          limitMiB: Math.round(this.recycleHeapBytes / 2 ** 20),
          afterMiB: Math.round(this.heapBytes / 2 ** 20),
        },
        `embedded database heap ${reason}: thread recycled`,
      );
    })().finally(() => {
      this.recycling = null;
    });
  }

  /** A new thread on the same directory, ready: what a recycle and the restart after initdb both do. */
  private async restartWorker(): Promise<void> {
    await this.stopWorker();
    this.start();
    await this.ready;
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
    // Cleared once the thread has answered: a pending timer kept every script that closes the database (db:migrate,
    // the benchmarks' seeds) running for the whole 10 s after its work was done.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
    clearTimeout(timer);
    this.worker = undefined as unknown as Worker; // its exit must not fail the next thread's requests
    await worker.terminate();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.recycling) await this.recycling.catch(() => undefined);
    this.closed = true;
    clearTimeout(this.idleTimer);
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

  constructor(readonly thread: PgliteThread) {
    super();
    thread.connections.add(this);
  }

  /** Nothing waiting to be sent or answered, outside any transaction. */
  get idle(): boolean {
    return this.inFlight === 0 && this.batch.length === 0 && this.txStatus === 'I';
  }

  forgetStatements() {
    this.parsedStatements = {};
    this.submittedNamedStatements = {};
  }

  /** Sends the batch that waited while another connection held the session. */
  resume() {
    this.flushBatch();
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
    if (this.batch.length === 0 || !this.thread.maySend(this)) return;
    const parts = this.batch;
    this.batch = [];
    // Serialised messages may be slices of Node's shared pool: the small ones are copied into buffers of their own
    // and moved to the thread with the large ones, which are the serializer's own (packForTransfer). The thread
    // joins them, on its own time.
    const batch = packForTransfer(parts, MOVE_AT);
    this.inFlight++;
    const answer = this.thread.exec(batch.parts, batch.transfer);
    // Answers are handled in the order the batches were sent, whatever order the promises settle in.
    this.chain = this.chain
      .then(() => answer)
      .then(
        (out) => {
          this.inFlight--;
          if (out.byteLength > 0) {
            this.parser.parse(Buffer.from(out.buffer, out.byteOffset, out.byteLength), (msg) => this.dispatch(msg));
          }
          if (this.idle) this.thread.maybeRecycle();
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
    void this.chain.then(() => {
      this.thread.connections.delete(this);
      this.thread.letGo(this);
      this.emit('end');
    });
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

interface SharedClient {
  client: pg.Client;
  ready: Promise<void>;
  /** A query is running on it: pg 9 will refuse a second one on a busy client, so the pool queues it instead. */
  busy: boolean;
}

interface Waiter {
  resolve: (shared: SharedClient) => void;
  reject: (err: Error) => void;
}

function connectionOf(client: pg.PoolClient | pg.Client): PgliteThreadConnection {
  return (client as unknown as { connection: PgliteThreadConnection }).connection;
}

/**
 * The pool over one PgliteThread. `query()` (what drizzle uses outside a transaction) goes to an idle one of up to
 * `width` clients, so several queries are in flight on the thread at once; past that, queries wait in the pool in
 * order. `connect()` (what drizzle uses for a transaction, and migrations for their lock) gives out the one client
 * that may hold the session, and holds it until the client is released: other queries wait, as they did when the
 * pool had a single client. Anything pg-specific that `query()` does not pipeline (a callback, a cursor) goes
 * through that client too.
 */
export class PglitePool extends pg.Pool {
  private readonly shared: SharedClient[] = [];
  private readonly waiting: Waiter[] = [];
  private closing = false;

  constructor(
    private readonly thread: PgliteThread,
    private readonly clientClass: typeof pg.Client,
    /**
     * Clients sending queries at once (TUNEBOARD_PGLITE_PIPELINE). One leaves the thread idle while the request
     * thread parses each answer and sends the next query (a list route kept it about 40 % busy); past a few, more
     * only lengthen the queue on the thread.
     */
    private readonly width: number,
  ) {
    // The pool's own single client is the transaction client; kept open for the life of the process.
    super({ Client: clientClass, max: 1, idleTimeoutMillis: 0 });
  }

  // Declared loosely: pg's overloads (promise or callback) all come here.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(callback?: any): any {
    const held = super.connect().then((client) => {
      const connection = connectionOf(client);
      this.thread.hold(connection);
      const release = client.release;
      client.release = (err?: Error | boolean) => {
        this.thread.letGo(connection);
        return release.call(client, err);
      };
      return client;
    });
    if (typeof callback !== 'function') return held;
    held.then(
      (client) => callback(undefined, client, client.release),
      (err: Error) => callback(err),
    );
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(config: any, values?: any, callback?: any): any {
    const piped =
      !this.closing &&
      typeof values !== 'function' &&
      typeof callback !== 'function' &&
      !(config && typeof config === 'object' && typeof config.submit === 'function');
    if (!piped) return super.query(config, values, callback);
    return this.pipelined(config, values);
  }

  private async pipelined(config: unknown, values: unknown): Promise<pg.QueryResult> {
    const shared = await this.acquire();
    try {
      await shared.ready;
      return await shared.client.query(config as pg.QueryConfig, values as unknown[]);
    } finally {
      this.giveBack(shared);
    }
  }

  /** An idle client, a new one while there are fewer than `width`, or the next to finish (first come, first served). */
  private acquire(): SharedClient | Promise<SharedClient> {
    if (this.closing) return Promise.reject(new Error('Cannot use a pool after calling end on the pool'));
    const idle = this.shared.find((s) => !s.busy);
    if (idle) {
      idle.busy = true;
      return idle;
    }
    if (this.shared.length < this.width) return this.open();
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private giveBack(shared: SharedClient): void {
    const next = this.waiting.shift();
    if (!next) {
      shared.busy = false;
    } else if (this.shared.includes(shared)) {
      next.resolve(shared);
    } else {
      // Its connection failed (or the pool is ending): the waiter gets a new client, or the pool's refusal.
      Promise.resolve()
        .then(() => this.acquire())
        .then(next.resolve, next.reject);
    }
  }

  private open(): SharedClient {
    const client = new this.clientClass();
    const shared: SharedClient = { client, ready: client.connect().then(() => undefined), busy: true };
    const drop = () => {
      const i = this.shared.indexOf(shared);
      if (i >= 0) this.shared.splice(i, 1);
    };
    shared.ready.catch(drop);
    // A client whose connection failed is replaced by the next query, as pg.Pool replaces its own.
    client.on('error', (err) => {
      drop();
      this.emit('error', err, client);
    });
    client.on('end', drop);
    this.shared.push(shared);
    return shared;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override async end(callback?: any): Promise<void> {
    this.closing = true;
    const refused = new Error('Cannot use a pool after calling end on the pool');
    for (const w of this.waiting.splice(0)) w.reject(refused);
    await Promise.all(this.shared.splice(0).map((s) => s.client.end().catch(() => undefined)));
    return super.end(callback);
  }
}
