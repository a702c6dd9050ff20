import 'server-only';
import { and, eq, inArray, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { DbOrTx } from './client';

/**
 * Queries whose SQL text is built once per shape and reused, for the reads behind the API's busiest routes.
 *
 * Drizzle turns its builder objects into SQL text on every call (walking every column, condition and subquery,
 * with an `is()` class check per node): for the model list that was about 0.3 ms of the request thread per
 * request, more than the embedded database spent running the statement. A prepared Drizzle query keeps the text
 * and only fills in the values, given as `sql.placeholder(name)`.
 *
 * - A *shape* is everything that changes the text: which optional filters are present, how many entities are in
 *   scope (`in ($1, $2)`, kept rather than `= any($1)` so the planner can still walk the ordered index for one
 *   entity), and literals that must stay literals (a metric name, matched by an expression index).
 * - Entries belong to the handle they were built on (a transaction's die with it) and are capped per handle,
 *   least recently used first out, since some shapes carry user input.
 * - Built unnamed: lib/db/statement-cache.ts already names each distinct text per connection, so the database
 *   also parses and plans it once.
 */
const MAX_SHAPES_PER_HANDLE = 256;
const byHandle = new WeakMap<object, Map<string, unknown>>();

export function preparedQuery<T>(db: DbOrTx, shape: string, build: () => T): T {
  let shapes = byHandle.get(db);
  if (!shapes) byHandle.set(db, (shapes = new Map()));
  let query = shapes.get(shape) as T | undefined;
  if (query === undefined) {
    query = build();
    if (shapes.size >= MAX_SHAPES_PER_HANDLE) shapes.delete(shapes.keys().next().value!);
  } else {
    shapes.delete(shape);
  }
  shapes.set(shape, query);
  return query;
}

/** `count` placeholders named `${prefix}0`, `${prefix}1`…, for an `in (…)` list of that length. */
export function placeholders(prefix: string, count: number): Placeholder[] {
  return Array.from({ length: count }, (_, i) => sql.placeholder(`${prefix}${i}`));
}

/** The values for placeholders(prefix, values.length). */
export function placeholderValues(prefix: string, values: readonly unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  values.forEach((v, i) => (out[`${prefix}${i}`] = v));
  return out;
}

/**
 * The row `id` when one of `entityCount` entities owns it (a scope check: outside them the row does not exist), as
 * the placeholders `id` and `entity0`…; their values: inScopeValues.
 */
export function inScope(id: AnyPgColumn, entityId: AnyPgColumn, entityCount: number): SQL {
  return and(eq(id, sql.placeholder('id')), inArray(entityId, placeholders('entity', entityCount)))!;
}

export function inScopeValues(id: string, entityIds: readonly string[]): Record<string, unknown> {
  return { id, ...placeholderValues('entity', entityIds) };
}
