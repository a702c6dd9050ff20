/**
 * Server-side prepared statements for every parameterised query, without naming them by hand.
 *
 * Drizzle sends each query unnamed, so the database parses, analyses and plans its text on every call. For the
 * short queries behind the API's list routes that work is most of what the database does (PGlite spends it on
 * its own thread, where a plan of the model-list query took longer than running it). A client built by
 * `withStatementCache` gives each distinct parameterised text a statement name the first time it is seen; pg
 * then sends Parse once per connection and only Bind/Execute afterwards, and PostgreSQL switches to a cached
 * generic plan once it is no worse than a custom one.
 *
 * Names are per client (the session's statements belong to its connection) and the number per client is capped,
 * so texts built with a varying number of placeholders cannot grow a session's memory without bound: past the
 * cap a text runs unnamed, as before. Behind a pooler in transaction mode (PgBouncer before 1.21) a statement
 * prepared on one server connection is unknown on the next: set TUNEBOARD_DB_STATEMENT_CACHE=0 there.
 */
import pg from 'pg';

interface QueryConfigLike {
  text?: unknown;
  name?: unknown;
  values?: unknown;
  submit?: unknown;
}

// A process-wide prefix per client: a replacement client on the same PGlite session (one session for the whole
// process) must not reuse the names its predecessor prepared there, or Parse would fail with "already exists".
let clientSeq = 0;

export function withStatementCache(Base: typeof pg.Client, limit: number): typeof pg.Client {
  if (limit <= 0) return Base;
  return class StatementCachingClient extends Base {
    private readonly statementNames = new Map<string, string>();
    private readonly statementPrefix = `tb${++clientSeq}_`;

    // pg's own overloads (callback, Submittable, stream) pass through untouched: only plain parameterised
    // configs are named.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    query(config: any, values?: any, callback?: any): any {
      if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
        const name = this.nameFor(config);
        if (name) config = { text: config, name };
      } else if (config && typeof config === 'object' && typeof (config as QueryConfigLike).submit !== 'function') {
        const c = config as QueryConfigLike;
        const params = Array.isArray(values) ? values : c.values;
        if (typeof c.text === 'string' && !c.name && Array.isArray(params) && params.length > 0) {
          const name = this.nameFor(c.text);
          if (name) config = { ...c, name };
        }
      }
      return super.query(config, values, callback);
    }

    private nameFor(text: string): string | undefined {
      const known = this.statementNames.get(text);
      if (known !== undefined || this.statementNames.size >= limit) return known;
      const name = `${this.statementPrefix}${this.statementNames.size + 1}`;
      this.statementNames.set(text, name);
      return name;
    }
  } as unknown as typeof pg.Client;
}
