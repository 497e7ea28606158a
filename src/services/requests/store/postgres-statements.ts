import { createHash } from 'node:crypto';
import type pg from 'pg';
import { quoteIdentifier } from '../../../shared/postgres-schema.js';
import { StatementLru } from './statement-lru.js';

/**
 * Characters of SQL text whose statements one PostgreSQL connection keeps prepared. A prepared
 * statement costs its server process far more per character of its text than SQLite's (its plans;
 * bench/README.md, "HEAD answers, filter shapes and statement caches"), so the bound is small: some
 * 30 to 60 of the page and count statements of common filters. A text longer than a quarter of it runs unnamed
 * (parsed and planned each time, kept nowhere).
 */
export const POSTGRES_STATEMENT_CHARS = 16 * 1024;

/** The statement name of a text: the same text always has the same name, in every connection. */
function statementName(text: string): string {
  return `s_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/** pg's own record, per connection, of the statements it prepared (name to text); absent in another pg. */
function parsedStatementsOf(client: pg.PoolClient): Record<string, string> | undefined {
  const connection = (client as unknown as { connection?: { parsedStatements?: Record<string, string> } }).connection;
  return connection?.parsedStatements;
}

/**
 * Named prepared statements on a pg Pool, bounded in every connection: each connection keeps its
 * statements in a StatementLru, and one dropped is deallocated (`DEALLOCATE`) in that connection
 * before the next statement runs there, and forgotten by pg (which would otherwise send it unparsed).
 * A pg that does not keep its record where this reads it runs every statement unnamed.
 */
export class PostgresStatements {
  private readonly kept = new WeakMap<pg.PoolClient, StatementLru<string>>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly maxChars = POSTGRES_STATEMENT_CHARS,
  ) {}

  /**
   * Runs `text` (with `$n` placeholders) on a connection of the pool, prepared there once while it is
   * used; its rows as objects, or as arrays with `rowMode` 'array'.
   */
  async query<T extends pg.QueryResultRow>(text: string, values: unknown[], rowMode?: 'array'): Promise<pg.QueryResult<T>> {
    const client = await this.pool.connect();
    let failure: Error | undefined;
    try {
      const parsed = parsedStatementsOf(client);
      // pg types a query of arrays apart (QueryArrayConfig); its rows are the caller's T all the same.
      const shaped = (config: pg.QueryConfig): pg.QueryConfig => (rowMode === undefined ? config : ({ ...config, rowMode } as pg.QueryConfig));
      if (parsed === undefined || text.length > this.maxChars / 4) return await client.query<T>(shaped({ text, values }));
      const name = statementName(text);
      await this.makeRoom(client, parsed, name, text);
      return await client.query<T>(shaped({ name, text, values }));
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      // A failed connection is closed, as pool.query does: its statements go with it.
      client.release(failure);
    }
  }

  /** Records `name` as used on `client`, deallocating there the statements it drops. */
  private async makeRoom(client: pg.PoolClient, parsed: Record<string, string>, name: string, text: string): Promise<void> {
    let statements = this.kept.get(client);
    if (statements === undefined) {
      statements = new StatementLru(this.maxChars);
      this.kept.set(client, statements);
    }
    if (statements.get(text) !== undefined) return;
    for (const [, dropped] of statements.set(text, name)) {
      if (parsed[dropped] === undefined) continue;
      await client.query(`DEALLOCATE ${quoteIdentifier(dropped)}`);
      // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- pg's record of the statements prepared, by name
      delete parsed[dropped];
    }
  }
}
