import 'server-only';
/**
 * A per-process cache of database answers whose correctness does not rest on its time limit: each entry carries
 * a tag (the user, the model it was read from), every change to what a tag covers publishes a notice naming it on
 * the cache's channel (lib/db/notifications.ts: NOTIFY on PostgreSQL, so every server process hears it), and the
 * tag's entries are dropped at once.
 *
 * Two races are closed explicitly:
 * - a lookup that started before an invalidation must not store its (possibly stale) answer after it: every
 *   invalidation bumps an epoch, and a lookup stores its result only if the epoch did not move;
 * - while the PostgreSQL listener is down notices can be missed, so nothing is cached then, and the whole cache
 *   is dropped whenever notices may have been missed.
 *
 * Requests that miss together while a lookup for their key is under way wait for its answer (single flight).
 */
import { isDelivering, listen, publish } from '@/lib/db/notifications';

/** What a lookup found: the value, its tag, and optionally when it stops being valid whatever happens. */
export type Loaded<T> = { value: T; tag: string; validUntil?: Date | null } | undefined;

interface Entry {
  value: unknown;
  tag: string;
  expiresAt: number;
}

interface State {
  entries: Map<string, Entry>;
  epoch: number;
  listening: boolean;
  /** Lookups under way, by key, with the epoch they began in. */
  loading: Map<string, { epoch: number; answer: Promise<Loaded<unknown>> }>;
}

export class NotifiedCache {
  private readonly state: State;

  /**
   * `channel`: the notice channel (also the name its state is kept under on globalThis, which survives Next's dev
   * server re-evaluating modules).
   */
  constructor(
    private readonly channel: string,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {
    const global = globalThis as unknown as Record<string, State | undefined>;
    this.state = global[`__tuneboardCache:${channel}`] ??= {
      entries: new Map(),
      epoch: 0,
      listening: false,
      loading: new Map(),
    };
  }

  private dropTag(tag: string) {
    this.state.epoch++;
    for (const [key, entry] of this.state.entries) if (entry.tag === tag) this.state.entries.delete(key);
  }

  private dropAll() {
    this.state.epoch++;
    this.state.entries.clear();
  }

  private ensureListening() {
    if (this.state.listening) return;
    this.state.listening = true;
    listen(
      this.channel,
      (tag) => (tag ? this.dropTag(tag) : this.dropAll()),
      () => this.dropAll(),
    );
  }

  /** The cached value for `key`, or `load()`'s answer (cached when it found something). */
  async get<T>(key: string, load: () => Promise<Loaded<T>>): Promise<T | undefined> {
    this.ensureListening();
    const { entries, loading } = this.state;
    const now = Date.now();
    const hit = entries.get(key);
    if (hit && hit.expiresAt > now) return hit.value as T;
    if (hit) entries.delete(key);
    const epoch = this.state.epoch;
    // Not a lookup that began before an invalidation: its answer may be what was just changed.
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
    if (epoch === this.state.epoch && isDelivering()) {
      if (entries.size >= this.maxEntries) entries.delete(entries.keys().next().value!);
      const expiresAt = Math.min(now + this.ttlMs, loaded.validUntil?.getTime() ?? Infinity);
      entries.set(key, { value: loaded.value, tag: loaded.tag, expiresAt });
    }
    return loaded.value;
  }

  /**
   * Call once a change to what `tags` cover has committed: every process drops their entries, this one before
   * this resolves, the others as soon as the notice arrives.
   */
  async changed(tags: string[]): Promise<void> {
    this.ensureListening();
    for (const tag of new Set(tags)) await publish(this.channel, tag);
  }
}
