import 'server-only';
import { and, eq, lt, or, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/**
 * Rows after a cursor row in newest-first order, `(created_at desc, id desc)`: older, or as old with a smaller
 * id. The cursor's values are plain values or `sql.placeholder`s (lib/db/prepared.ts).
 */
export function olderThan(createdAt: AnyPgColumn, id: AnyPgColumn, cursor: { createdAt: unknown; id: unknown }): SQL {
  return or(lt(createdAt, cursor.createdAt), and(eq(createdAt, cursor.createdAt), lt(id, cursor.id)))!;
}

/** olderThan a cursor given later, as the placeholders `afterCreatedAt` and `afterId` (their values: cursorValues). */
export function olderThanCursor(createdAt: AnyPgColumn, id: AnyPgColumn): SQL {
  return olderThan(createdAt, id, { createdAt: sql.placeholder('afterCreatedAt'), id: sql.placeholder('afterId') });
}

/** The values of olderThanCursor's placeholders. They skip the column's own encoding: the timestamp goes as text. */
export function cursorValues(after: { createdAt: Date; id: string } | undefined) {
  return { afterCreatedAt: after?.createdAt.toISOString(), afterId: after?.id };
}

const MAX_SEQ = '9223372036854775807';

/**
 * The rows of one owner (a job, a model) in `seq` order as a range of an index on `(owner columns…, seq)`: the
 * key `(owner…, seq)` between `(values…, after)` and `(values…, before)`, ordered by the whole key. `seq` is a
 * bigserial (1 to the largest bigint); `prefix` pairs a column name with its value.
 *
 * Why not `owner = $1 order by seq`: the primary key (seq) gives that order too, and the planner (PostgreSQL's
 * and PGlite's), which knows only that a few owners share many rows and not that each owner's rows sit together,
 * costed "walk the primary key from the start, skipping other owners' rows" below "walk this owner's index". A page
 * of a job created after a 1M-event job then read the million first: 0.7 s on PostgreSQL. Written as row
 * comparisons, the range is an index condition only the owner's index can serve, and the order one only it gives.
 */
export function seqRange(
  prefix: [column: string, value: SQL][],
  opts: { afterSeq?: SQL; beforeSeq?: SQL; desc?: boolean },
): { where: SQL; order: SQL } {
  const columns = [...prefix.map(([c]) => c), 'seq'];
  const key = sql.raw(`(${columns.join(', ')})`);
  const at = (seq: SQL) => sql`(${sql.join([...prefix.map(([, v]) => v), seq], sql`, `)})`;
  const low = sql`${key} > ${at(opts.afterSeq ?? sql.raw('0'))}`;
  const high = opts.beforeSeq ? sql`${key} < ${at(opts.beforeSeq)}` : sql`${key} <= ${at(sql.raw(MAX_SEQ))}`;
  const dir = opts.desc ? ' desc' : '';
  return { where: sql`${low} and ${high}`, order: sql.raw(columns.map((c) => c + dir).join(', ')) };
}
