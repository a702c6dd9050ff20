import 'server-only';
/**
 * Callers resolved from a key or session, kept for a few seconds so that a busy client costs no authentication
 * query per request. Every change to a key, a session or a membership publishes an `auth` notice naming the user,
 * and the user's entries are dropped at once in every process (lib/services/notified-cache.ts).
 */
import { NotifiedCache } from './notified-cache';

const cache = new NotifiedCache('tuneboard_auth', 10_000);

type Loaded<T> = { value: T; userId: string; validUntil: Date | null } | undefined;

/**
 * The cached value for `key`, or `load()`'s answer (cached when it names a user). `validUntil` caps the
 * entry's life at the credential's own expiry. Requests that miss together (a rollout's hundred completions on
 * one key when its entry expires) share one lookup.
 */
export function cachedPrincipal<T>(key: string, load: () => Promise<Loaded<T>>): Promise<T | undefined> {
  return cache.get(key, async () => {
    const loaded = await load();
    return loaded && { value: loaded.value, tag: loaded.userId, validUntil: loaded.validUntil };
  });
}

/**
 * Call after a change to a user's keys, sessions or memberships has committed: every process drops what it
 * holds for them before this resolves here, and as soon as the notice arrives elsewhere.
 */
export function principalChanged(userIds: string[]): Promise<void> {
  return cache.changed(userIds);
}
