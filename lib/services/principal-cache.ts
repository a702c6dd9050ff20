import 'server-only';
/**
 * Callers resolved from a key or session, kept for a few seconds so that a busy client costs no
 * authentication query per request. Correctness does not rest on the time limit: every change to a key, a
 * session or a membership publishes an `auth` notice naming the user (lib/db/notifications.ts: NOTIFY on
 * PostgreSQL, so every server process hears it), and the user's entries are dropped at once.
 *
 * Two races are closed explicitly:
 * - a lookup that started before an invalidation must not store its (possibly stale) answer after it:
 *   every invalidation bumps an epoch, and a lookup stores its result only if the epoch did not move;
 * - while the PostgreSQL listener is down notices can be missed, so nothing is cached then, and the
 *   whole cache is dropped whenever notices may have been missed.
 */
import { isDelivering, listen, publish } from '@/lib/db/notifications';

const CHANNEL = 'tuneboard_auth';
const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  value: T;
  userId: string;
  expiresAt: number;
}

type Loaded<T> = { value: T; userId: string; validUntil: Date | null } | undefined;

interface Cache {
  entries: Map<string, Entry<unknown>>;
  epoch: number;
  listening: boolean;
  /** Lookups under way, by key, with the epoch they began in. */
  loading?: Map<string, { epoch: number; answer: Promise<Loaded<unknown>> }>;
}
const globalForCache = globalThis as unknown as { __tuneboardPrincipalCache?: Cache };
const cache: Cache = (globalForCache.__tuneboardPrincipalCache ??= { entries: new Map(), epoch: 0, listening: false });
const loading = (cache.loading ??= new Map());

function dropUser(userId: string) {
  cache.epoch++;
  for (const [key, entry] of cache.entries) if (entry.userId === userId) cache.entries.delete(key);
}

function dropAll() {
  cache.epoch++;
  cache.entries.clear();
}

function ensureListening() {
  if (cache.listening) return;
  cache.listening = true;
  listen(CHANNEL, (userId) => (userId ? dropUser(userId) : dropAll()), dropAll);
}

/**
 * The cached value for `key`, or `load()`'s answer (cached when it names a user). `validUntil` caps the
 * entry's life at the credential's own expiry.
 */
export async function cachedPrincipal<T>(key: string, load: () => Promise<Loaded<T>>): Promise<T | undefined> {
  ensureListening();
  const now = Date.now();
  const hit = cache.entries.get(key);
  if (hit && hit.expiresAt > now) return hit.value as T;
  if (hit) cache.entries.delete(key);
  const epoch = cache.epoch;
  // Requests that miss while a lookup for their key is under way wait for its answer: a client with a hundred
  // requests in flight on one key (an RL rollout) otherwise sent a hundred identical queries whenever its entry
  // expired. Not a lookup that began before an invalidation: its answer may be what was just revoked.
  const shared = loading.get(key);
  if (shared && shared.epoch === epoch) return ((await shared.answer) as Loaded<T>)?.value;
  const answer = load();
  loading.set(key, { epoch, answer });
  let loaded: Loaded<T>;
  try {
    loaded = await answer;
  } finally {
    if (loading.get(key)?.answer === answer) loading.delete(key);
  }
  if (!loaded) return undefined;
  if (epoch === cache.epoch && isDelivering()) {
    if (cache.entries.size >= MAX_ENTRIES) cache.entries.delete(cache.entries.keys().next().value!);
    const expiresAt = Math.min(now + TTL_MS, loaded.validUntil?.getTime() ?? Infinity);
    cache.entries.set(key, { value: loaded.value, userId: loaded.userId, expiresAt });
  }
  return loaded.value;
}

/**
 * Call after a change to a user's keys, sessions or memberships has committed: every process drops what it
 * holds for them before this resolves here, and as soon as the notice arrives elsewhere.
 */
export async function principalChanged(userIds: string[]): Promise<void> {
  ensureListening();
  for (const id of new Set(userIds)) await publish(CHANNEL, id);
}
