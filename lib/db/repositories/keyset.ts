import 'server-only';
import { and, eq, lt, or, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/**
 * Rows after a cursor row in newest-first order, `(created_at desc, id desc)`: older, or as old with a smaller
 * id. The cursor's values are plain values or `sql.placeholder`s (lib/db/prepared.ts).
 */
export function olderThan(createdAt: AnyPgColumn, id: AnyPgColumn, cursor: { createdAt: unknown; id: unknown }): SQL {
  return or(lt(createdAt, cursor.createdAt), and(eq(createdAt, cursor.createdAt), lt(id, cursor.id)))!;
}
