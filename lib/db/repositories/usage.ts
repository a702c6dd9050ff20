import 'server-only';
import { and, asc, gte, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { usageRecords } from '../schema';

/** Adds one request's tokens to its (entity, project, model, day) row. */
export async function addUsage(
  db: DbOrTx,
  input: {
    entityId: string;
    project: string;
    model: string;
    day: string;
    promptTokens: number;
    completionTokens: number;
  },
): Promise<void> {
  await db
    .insert(usageRecords)
    .values({ ...input, requests: 1 })
    .onConflictDoUpdate({
      target: [usageRecords.entityId, usageRecords.project, usageRecords.model, usageRecords.day],
      set: {
        requests: sql`${usageRecords.requests} + 1`,
        promptTokens: sql`${usageRecords.promptTokens} + ${input.promptTokens}`,
        completionTokens: sql`${usageRecords.completionTokens} + ${input.completionTokens}`,
      },
    });
}

/** Adds several (entity, project, model, day) rows' counts at once; the keys must be distinct. */
export async function addUsageBatch(
  db: DbOrTx,
  rows: {
    entityId: string;
    project: string;
    model: string;
    day: string;
    requests: number;
    promptTokens: number;
    completionTokens: number;
  }[],
): Promise<void> {
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
