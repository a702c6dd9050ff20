/**
 * Change notices between server processes. On PostgreSQL several instances share one database, so a
 * process that changes something others cache (a revoked key, a membership) publishes a notice with
 * NOTIFY and every process, itself included, hears it through LISTEN on one dedicated connection. The
 * embedded database is opened by one process only, so there a notice is delivered in-process.
 *
 * A listener that is not connected cannot promise to hear a notice: `isDelivering()` is false then, and
 * every (re)connection reports a gap, so that caches drop what they hold instead of trusting it.
 */
import { sql } from 'drizzle-orm';
import { config } from '@/lib/config';
import { getDbHandle } from './client';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('db');

type Handler = (payload: string) => void;

interface ChannelState {
  handlers: Set<Handler>;
  onGap: Set<() => void>;
}

interface ListenerState {
  channels: Map<string, ChannelState>;
  client: import('pg').Client | null;
  connected: boolean;
  connecting: boolean;
  stopped: boolean;
}

// On globalThis for the same reason as the database handle: Next's dev server re-evaluates modules.
const globalForNotify = globalThis as unknown as { __tuneboardNotify?: ListenerState };
const state: ListenerState = (globalForNotify.__tuneboardNotify ??= {
  channels: new Map(),
  client: null,
  connected: false,
  connecting: false,
  stopped: false,
});

function channel(name: string): ChannelState {
  let ch = state.channels.get(name);
  if (!ch) {
    ch = { handlers: new Set(), onGap: new Set() };
    state.channels.set(name, ch);
  }
  return ch;
}

function deliver(name: string, payload: string) {
  for (const handler of state.channels.get(name)?.handlers ?? []) {
    try {
      handler(payload);
    } catch (err) {
      log.error({ err }, 'notification handler failed');
    }
  }
}

function gap() {
  for (const ch of state.channels.values()) for (const g of ch.onGap) g();
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function connectListener(): Promise<void> {
  if (state.connecting || state.connected || state.stopped || !config.databaseUrl) return;
  state.connecting = true;
  const { Client } = await import('pg');
  const client = new Client({ connectionString: config.databaseUrl });
  const lost = () => {
    if (state.client !== client) return;
    state.client = null;
    state.connected = false;
    gap();
    client.end().catch(() => undefined);
    if (!state.stopped) setTimeout(() => void connectListener(), 1000).unref();
  };
  client.on('error', (err) => {
    log.warn({ err: err.message }, 'notification listener lost its connection');
    lost();
  });
  client.on('end', lost);
  client.on('notification', (msg) => deliver(msg.channel, msg.payload ?? ''));
  try {
    await client.connect();
    // A listener must never keep a script or a test process alive on its own.
    (client as unknown as { connection: { stream: { unref?: () => void } } }).connection.stream.unref?.();
    for (const name of state.channels.keys()) await client.query(`LISTEN ${quoteIdent(name)}`);
    state.client = client;
    state.connected = true;
    // Anything published while we were not listening is lost: report a gap.
    gap();
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'notification listener could not connect');
    client.end().catch(() => undefined);
    if (!state.stopped) setTimeout(() => void connectListener(), 1000).unref();
  } finally {
    state.connecting = false;
  }
}

/**
 * Calls `handler` with the payload of every notice on `name`, from any process, and `onGap` whenever
 * notices may have been missed (the listener connected, reconnected or lost its connection).
 */
export function listen(name: string, handler: Handler, onGap: () => void): void {
  const ch = channel(name);
  ch.handlers.add(handler);
  ch.onGap.add(onGap);
  if (!config.databaseUrl) return;
  if (state.connected && state.client) {
    state.client.query(`LISTEN ${quoteIdent(name)}`).catch(() => undefined);
  } else {
    void connectListener();
  }
}

/** Whether every notice published from now on will reach this process's handlers. */
export function isDelivering(): boolean {
  return !config.databaseUrl || state.connected;
}

/**
 * The channel of changes to trained models and their checkpoints (payload: the model id). The serving caches
 * (lib/services/served-models.ts) listen on it; whoever commits such a change publishes on it (the job queue when a
 * job's checkpoint lands), so the writer never imports the caches.
 */
export const MODELS_CHANNEL = 'tuneboard_models';

/** Publishes a notice to every process (this one included) once the current statement has committed. */
export async function publish(name: string, payload: string): Promise<void> {
  const handle = await getDbHandle();
  if (handle.kind === 'postgres') {
    await handle.db.execute(sql`select pg_notify(${name}, ${payload})`);
  }
  // Delivered here at once, whether or not the LISTEN connection echoes it back later.
  deliver(name, payload);
}

export async function stopListening(): Promise<void> {
  state.stopped = true;
  const client = state.client;
  state.client = null;
  state.connected = false;
  await client?.end().catch(() => undefined);
}
