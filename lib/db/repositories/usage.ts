import 'server-only';
import { and, asc, gte, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { usageRecords } from '../schema';

/** One (entity, project, model, day) row's counts to add. */
export interface UsageCounts {
  entityId: string;
  project: string;
  model: string;
  day: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

/** Adds several (entity, project, model, day) rows' counts at once; the keys must be distinct. */
export async function addUsageBatch(db: DbOrTx, rows: UsageCounts[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insert(usageRecords)
    .values(rows)
    .onConflictDoUpdate({
      target: [usageRecords.entityId, usageRecords.project, usageRecords.model, usageRecords.day],
      set: {
        requests: sql`${usageRecords.requests} + excluded.requests`,
        promptTokens: sql`${usageRecords.promptTokens} + excluded.prompt_tokens`,
        completionTokens: sql`${usageRecords.completionTokens} + excluded.completion_tokens`,
      },
    });
}

export async function listUsage(db: DbOrTx, entityIds: string[], sinceDay: string) {
  if (entityIds.length === 0) return [];
  return db
    .select()
    .from(usageRecords)
    .where(and(inArray(usageRecords.entityId, entityIds), gte(usageRecords.day, sinceDay)))
    .orderBy(asc(usageRecords.day), asc(usageRecords.project), asc(usageRecords.model));
}
