import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { jobEvents } from '../schema';
import { placeholders, placeholderValues, preparedQuery } from '../prepared';
import { seqRange } from './keyset';

/** A job's events in seq order (all of one type, given `type`): a range of its index (see seqRange). */
export function jobRange(job: SQL, opts: { afterSeq?: SQL; beforeSeq?: SQL; type?: SQL; desc?: boolean }) {
  const prefix: [string, SQL][] = opts.type
    ? [
        ['job_id', job],
        ['type', opts.type],
      ]
    : [['job_id', job]];
  return seqRange(prefix, opts);
}

/**
 * A page of a job's events in either order, after or before a cursor (its seq), in list order. The scan
 * runs away from the cursor, so a page before it is read backwards and then reversed: an index range scan
 * of job_events_job_seq_idx (or job_events_job_type_seq_idx) either way.
 */
export async function pageEvents(db: DbOrTx, jobId: string, opts: EventPageOptions) {
  const { query, backwards } = pageEventsQuery(db, jobId, opts);
  return { rows: await query, backwards };
}

interface EventPageOptions {
  order: 'asc' | 'desc';
  afterSeq?: number;
  beforeSeq?: number;
  type?: (typeof jobEvents.$inferSelect)['type'];
  limit: number;
}

/** pageEvents' query, not yet run (the tests explain it). */
export function pageEventsQuery(db: DbOrTx, jobId: string, opts: EventPageOptions) {
  const backwards = opts.beforeSeq !== undefined;
  const scanDesc = (opts.order === 'desc') !== backwards;
  const cursor = opts.afterSeq ?? opts.beforeSeq;
  const bound = cursor === undefined ? undefined : sql`${cursor}::bigint`;
  const range = jobRange(sql`${jobId}::uuid`, {
    type: opts.type === undefined ? undefined : sql`${opts.type}::text`,
    desc: scanDesc,
    ...(scanDesc ? { beforeSeq: bound } : { afterSeq: bound }),
  });
  const query = db.select().from(jobEvents).where(range.where).orderBy(range.order).limit(opts.limit);
  return { query, backwards };
}

export type ScopedEventPage =
  | { kind: 'no_job' }
  | { kind: 'unknown_cursor' }
  | {
      kind: 'page';
      /** The page's events as the API shows them (docs/contract.md §3.7), JSON texts joined by commas. */
      items: string;
      firstId: string;
      lastId: string;
      hasMore: boolean;
    };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An event as the API's JSON: `{"id", "type", "data", "created_at"}`, in that order, the time in UTC with
 * milliseconds (as Date.toISOString() writes it, truncating microseconds the same way). Written by the database
 * because this is the route clients poll while following a job: decoding 100 rows (a jsonb each, a timestamp
 * each) and serializing them again cost the request thread about 8 µs per event; building the text here costs
 * PGlite about 3.
 */
const EVENT_JSON = sql`concat(
  '{"id":"', p.id, '","type":', to_json(p.type), ',"data":', p.data,
  ',"created_at":"', to_char(p.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '"}')`;

/**
 * The common page (oldest first, optionally after a cursor event) in one query and as one row: the job's scope
 * check, the cursor's position, the page as JSON text, its first and last ids, and whether more follow. The job
 * row always takes part (a page row of nulls when the page is empty), so "no such job" and "empty page" stay
 * apart.
 */
export async function pageEventsInScope(
  db: DbOrTx,
  input: { jobId: string; entityIds: string[]; afterId?: string; limit: number },
): Promise<ScopedEventPage> {
  if (input.entityIds.length === 0 || !UUID.test(input.jobId)) return { kind: 'no_job' };
  const after = input.afterId ?? null;
  if (after !== null && !UUID.test(after)) {
    // Not even a uuid: no event has it, but the job's existence still decides between 404 and 422.
    const exists = await pageEventsInScope(db, { ...input, afterId: undefined, limit: 0 });
    return exists.kind === 'no_job' ? exists : { kind: 'unknown_cursor' };
  }
  if (!Number.isInteger(input.limit) || input.limit < 0 || input.limit > 1000) throw new RangeError('page size');
  // The route clients poll while they follow a job: its text is built once per shape (lib/db/prepared.ts).
  const shape = `events.pageInScope|${input.entityIds.length}|${after !== null}|${input.limit}`;
  const query = preparedQuery(db, shape, () =>
    db
      .select({
        jobs: sql<number>`q.jobs`,
        cursorFound: sql<boolean | null>`q.cursor_found`,
        items: sql<string | null>`q.items`,
        hasMore: sql<boolean>`q.has_more`,
        firstId: sql<string | null>`q.first_id`,
        lastId: sql<string | null>`q.last_id`,
      })
      .from(
        sql`(${pageInScopeSql({
          jobId: sql.placeholder('jobId'),
          afterId: after === null ? null : sql.placeholder('afterId'),
          entityIds: placeholders('entity', input.entityIds.length),
          limit: input.limit,
        })}) q`,
      )
      .prepare(''),
  );
  const [row] = await query.execute({
    jobId: input.jobId,
    afterId: after,
    ...placeholderValues('entity', input.entityIds),
  });
  if (!row || row.jobs === 0) return { kind: 'no_job' };
  if (after !== null && !row.cursorFound) return { kind: 'unknown_cursor' };
  return {
    kind: 'page',
    items: row.items ?? '',
    firstId: row.firstId ?? '',
    lastId: row.lastId ?? '',
    hasMore: Boolean(row.hasMore),
  };
}

/** pageEventsInScope's statement with these values (the tests explain it). */
export function pageEventsInScopeQuery(input: { jobId: string; entityIds: string[]; afterId?: string; limit: number }) {
  return pageInScopeSql({ ...input, afterId: input.afterId ?? null });
}

/** pageEventsInScope's statement; its values are placeholders where it is prepared, values where it is explained. */
function pageInScopeSql(v: { jobId: unknown; afterId: unknown; entityIds: unknown[]; limit: number }) {
  const scope = sql.join(
    v.entityIds.map((id) => sql`${id}::uuid`),
    sql`, `,
  );
  // Two statement texts, with and without a cursor, rather than one with `$after is null or seq > c.seq`: once
  // PostgreSQL switches a prepared statement to its generic plan, that disjunction cannot bound the index scan
  // and the page filters every earlier event of the job (15 ms per page at 50,000 events on PGlite).
  const cursor =
    v.afterId !== null
      ? {
          found: sql`(c.seq is not null)`,
          join: sql`left join lateral (select seq from job_events where job_id = j.id and id = ${v.afterId}::uuid) c on true`,
          range: jobRange(sql`j.id`, { afterSeq: sql`c.seq` }),
        }
      : { found: sql`true`, join: sql``, range: jobRange(sql`j.id`, {}) };
  // The page size is part of the statement's text, not a parameter: with `limit $n` the planner's generic plan
  // assumes a tenth of the job's events, so PostgreSQL kept planning the statement afresh on every call (its
  // custom plans looked cheaper), which cost PGlite more than running it. Clients keep one page size, so this is a
  // statement or two per page size they use.
  const limit = sql.raw(String(v.limit));
  const fetch = sql.raw(String(v.limit + 1));
  // One event past the page says whether more follow (it is numbered, not written out). The page's first and last
  // ids come by primary key: probes, where array_agg over the page would sort it again.
  return sql`
    select s.jobs, s.cursor_found, s.items, s.fetched > ${limit} as has_more,
           (select id from job_events where seq = s.first_seq) as first_id,
           (select id from job_events where seq = s.last_seq) as last_id
    from (
      select count(*)::int as jobs, bool_or(${cursor.found}) as cursor_found, count(e.seq) as fetched,
             string_agg(e.item, ',' order by e.seq) as items, min(e.seq) as first_seq,
             max(e.seq) filter (where e.item is not null) as last_seq
      from training_jobs j
      ${cursor.join}
      left join lateral (
        select p.seq, case when p.n <= ${limit} then ${EVENT_JSON} end as item
        from (
          select *, row_number() over (order by seq) as n
          from (
            select * from job_events
            where ${cursor.range.where}
            order by ${cursor.range.order}
            limit ${fetch}
          ) page
        ) p
      ) e on true
      where j.id = ${v.jobId}::uuid and j.entity_id in (${scope})
    ) s`;
}
