import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteThread, pgliteClientClass } from './pglite-connection';
import { withStatementCache } from './statement-cache';

let thread: PgliteThread;
beforeAll(() => {
  thread = new PgliteThread('memory://', 2 ** 40);
  return thread.waitReady();
}, 180_000);
afterAll(() => thread.close());

async function prepared(client: pg.PoolClient): Promise<string[]> {
  const { rows } = await client.query('select statement from pg_prepared_statements order by prepare_time');
  return rows.map((r: { statement: string }) => r.statement);
}

describe('withStatementCache', () => {
  it('prepares each parameterised text once per session, up to the cap, and answers as before', async () => {
    const pool = new pg.Pool({ Client: withStatementCache(pgliteClientClass(thread), 3), max: 1 });
    const client = await pool.connect();
    try {
      for (let i = 0; i < 3; i++) {
        expect((await client.query('select $1::int * 2 as n', [i])).rows).toEqual([{ n: i * 2 }]);
        expect((await client.query({ text: 'select $1::text as t', rowMode: 'array' }, [`v${i}`])).rows).toEqual([
          [`v${i}`],
        ]);
      }
      // Unparameterised text goes by the simple protocol and is not kept.
      await client.query('select 1');
      expect(await prepared(client)).toEqual(['select $1::int * 2 as n', 'select $1::text as t']);
      // The third name: a failing statement leaves nothing half-prepared: the next call reports the same error, not "does not exist".
      for (let i = 0; i < 2; i++) {
        await expect(client.query('select $1::int from no_such_table', [1])).rejects.toThrow(/no_such_table/);
      }
      // Past the cap a new text still answers, unnamed.
      expect((await client.query('select $1::int + 1 as n', [1])).rows).toEqual([{ n: 2 }]);
      expect(await prepared(client)).toHaveLength(2);
    } finally {
      client.release();
      await pool.end();
    }
  });

  it('gives a replacement client on the same session names of its own', async () => {
    const Client = withStatementCache(pgliteClientClass(thread), 10);
    for (let round = 0; round < 2; round++) {
      // Each pool makes a new client on the one PGlite session, whose earlier statements are still there.
      const pool = new pg.Pool({ Client, max: 1 });
      expect((await pool.query('select $1::int as n', [round])).rows).toEqual([{ n: round }]);
      await pool.end();
    }
  });

  it('is off at 0', () => {
    const Base = pgliteClientClass(thread);
    expect(withStatementCache(Base, 0)).toBe(Base);
  });
});
