import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BodyFlavor } from '@/lib/body/parse';
import type { BodyKind, Prepared } from '@/lib/body/prepared';
import type { FromBodyThread, ToBodyThread } from '@/lib/body/protocol';
import { ApiError } from '@/lib/errors';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('api');

/** Where a large body's bytes go as they arrive; `end` resolves with what the handler stores. */
export interface BodySink<T> {
  write(bytes: Uint8Array): void;
  end(): Promise<T>;
  abort(): void;
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

let worker: Worker | undefined;
const pending = new Map<number, Pending>();
let nextId = 0;
let bodies = 0;
/** Sinks opened and not yet answered or aborted. */
let open = 0;
let retireTimer: NodeJS.Timeout | undefined;

/**
 * How long the body thread outlives its last body. Idle, it kept what its last body left: the body's text as one
 * string (64 MiB for a 64 MiB log) and V8 pages it no longer used (43 MiB of heap for 6 in use), since an idle
 * thread allocates nothing and so never collects. Ending it gives that back; the next large body starts a new
 * one, which takes a few tens of milliseconds on the thread, not the request thread.
 */
const RETIRE_AFTER_MS = 2_000;

/** How many bodies the body thread was given since start (tests check that large ones go there). */
export function bodyThreadCount(): number {
  return bodies;
}

/** Whether a body thread is running now (tests check that an idle one is ended). */
export function bodyThreadRunning(): boolean {
  return worker !== undefined;
}

function settled() {
  open--;
  if (open === 0) retireTimer = setTimeout(retire, RETIRE_AFTER_MS).unref();
}

function retire() {
  const w = worker;
  if (!w || open > 0) return;
  worker = undefined;
  // Nothing is pending on it: its exit must not fail the bodies a later thread is given.
  w.removeAllListeners('exit');
  w.removeAllListeners('error');
  void w.terminate();
}

function thread(): Worker {
  if (worker) return worker;
  // A bundle of lib/body/thread.ts made by scripts/build-worker.mjs: Next's server bundle has no file a Worker
  // could load.
  const bundled = path.join(process.cwd(), '.tuneboard', 'body-worker.mjs');
  if (!fs.existsSync(bundled)) throw new Error(`${bundled} is missing: run node scripts/build-worker.mjs`);
  const w = new Worker(bundled);
  // Idle, it must not keep the process alive; requests in flight hold their own promises.
  w.unref();
  w.on('message', (message: FromBodyThread) => {
    const p = pending.get(message.id);
    if (!p) return;
    pending.delete(message.id);
    settled();
    if (message.type === 'prepared') p.resolve(message.value);
    else if (message.error.code === 'internal') p.reject(new Error(`body thread: ${message.error.message}`));
    else p.reject(new ApiError(message.error.code, message.error.message, { ...message.error }));
  });
  const fail = (err: Error) => {
    if (worker === w) worker = undefined;
    for (const [id, p] of pending) {
      pending.delete(id);
      settled();
      p.reject(err);
    }
  };
  w.on('error', (err) => {
    log.error({ err }, 'body thread failed');
    fail(err);
  });
  w.on('exit', (code) => fail(new Error(`body thread exited (${code})`)));
  worker = w;
  return w;
}

/** Tests: ends the body thread as a crash would, bodies under way included. */
export function crashBodyThread(): Promise<number> | undefined {
  return worker?.terminate();
}

/** Streams a body of `kind` to the body thread, which parses, validates and prepares it there. */
export function openBodySink<K extends BodyKind>(kind: K, flavor: BodyFlavor): BodySink<Prepared<K>> {
  const w = thread();
  const id = ++nextId;
  bodies++;
  open++;
  clearTimeout(retireTimer);
  const send = (message: ToBodyThread) => w.postMessage(message);
  send({ type: 'begin', id, kind, flavor });
  return {
    write(bytes) {
      // A copy: the chunk's buffer may be a slice of one the HTTP layer reuses, so it cannot be transferred.
      send({ type: 'chunk', id, bytes });
    },
    end() {
      // The thread died (or was replaced after dying) while this body was still arriving: the failure only
      // reached the bodies already ended, and the end message would go to a thread that never answers.
      if (worker !== w) {
        settled();
        return Promise.reject(new Error('body thread exited before the body was complete'));
      }
      return new Promise<Prepared<K>>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        send({ type: 'end', id });
      });
    },
    abort() {
      pending.delete(id);
      send({ type: 'abort', id });
      settled();
    },
  };
}
