import 'server-only';
import { getDb } from '@/lib/db/client';
import * as usageRepo from '@/lib/db/repositories/usage';
import { entityByName, type Principal } from './accounts';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('usage');

/**
 * Which entity and project a chat request is billed to (docs/contract.md §1.3): the `Compat-Project` / `OpenAI-Project`
 * header when it looks like `<team>/<project>` and names an entity the caller belongs to; otherwise a trained
 * model's own entity and project (`owner`), and for a base model the key owner's personal entity and project
 * `inference`. A malformed or foreign header is ignored, never an error.
 */
export function usageTarget(
  principal: Principal,
  headers: Headers,
  owner?: { entityId: string; project: string },
): { entityId: string; project: string } {
  const header = headers.get('compat-project') ?? headers.get('openai-project');
  const match = header ? /^([^/]+)\/([^/]+)$/.exec(header.trim()) : null;
  const entity = match ? entityByName(principal, match[1]) : undefined;
  if (match && entity) return { entityId: entity.id, project: match[2] };
  return owner ?? { entityId: principal.personalEntity.id, project: 'inference' };
}

/** Counts not yet written, one row per (entity, project, model, day): the repository's own row type. */
type PendingUsage = usageRepo.UsageCounts;

// Chat requests add up in memory and reach the database in one statement per flush, so a server answering
// hundreds of completions per second writes a few rows per second, not one upsert per request. What a crash
// can lose is bounded by the interval.
const FLUSH_INTERVAL_MS = 1000;
const FLUSH_AT_ROWS = 500;

const globalForUsage = globalThis as unknown as {
  __tuneboardUsage?: { pending: Map<string, PendingUsage>; timer: NodeJS.Timeout | null; flushing: Promise<void> };
};
const usage = (globalForUsage.__tuneboardUsage ??= { pending: new Map(), timer: null, flushing: Promise.resolve() });

/** Writes everything recorded so far; resolves once it is in the database. */
export function flushUsage(): Promise<void> {
  if (usage.timer) {
    clearTimeout(usage.timer);
    usage.timer = null;
  }
  const batch = [...usage.pending.values()];
  usage.pending.clear();
  usage.flushing = usage.flushing.then(async () => {
    if (batch.length === 0) return;
    try {
      await usageRepo.addUsageBatch(await getDb(), batch);
    } catch (err) {
      log.error({ err, rows: batch.length }, 'usage not recorded');
    }
  });
  return usage.flushing;
}

export function recordUsage(input: {
  entityId: string;
  project: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
}): void {
  const day = new Date().toISOString().slice(0, 10);
  const key = JSON.stringify([input.entityId, input.project, input.model, day]);
  const row = usage.pending.get(key);
  if (row) {
    row.requests += 1;
    row.promptTokens += input.promptTokens;
    row.completionTokens += input.completionTokens;
  } else {
    usage.pending.set(key, { ...input, day, requests: 1 });
  }
  if (usage.pending.size >= FLUSH_AT_ROWS) void flushUsage();
  else if (!usage.timer) {
    usage.timer = setTimeout(() => void flushUsage(), FLUSH_INTERVAL_MS);
    usage.timer.unref();
  }
}

export async function listUsage(principal: Principal, q: { entity?: string; days: number }) {
  // This process's own recent requests are part of the answer.
  await flushUsage();
  const scope =
    q.entity === undefined ? principal.memberships : principal.memberships.filter((m) => m.name === q.entity);
  const names = new Map(scope.map((m) => [m.id, m.name]));
  const since = new Date(Date.now() - (q.days - 1) * 86_400_000).toISOString().slice(0, 10);
  const rows = await usageRepo.listUsage(await getDb(), [...names.keys()], since);
  return {
    object: 'list' as const,
    data: rows.map((r) => ({
      entity: names.get(r.entityId)!,
      project: r.project,
      model: r.model,
      day: r.day,
      requests: r.requests,
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
    })),
  };
}
