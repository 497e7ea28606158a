import Database from 'better-sqlite3';
import { StatementLru } from './statement-lru.js';

/**
 * Characters of SQL text whose statements one SQLite connection keeps prepared: every page, count
 * and summary statement of the common filters, and the largest merges of walks (about 10,000
 * characters each) several times over; their memory: bench/README.md, "HEAD answers, filter shapes
 * and statement caches".
 */
export const SQLITE_STATEMENT_CHARS = 256 * 1024;

/**
 * The prepared statements of one SQLite connection that this object opens and owns, in a
 * StatementLru. better-sqlite3 finalizes a statement only when the garbage collector takes it or
 * when its connection closes, and a statement's memory is SQLite's, which the collector does not
 * see: statements merely dropped could pile up. So once the texts dropped add up to the bound, the
 * connection is closed, which finalizes every statement it prepared, and the next statement opens it
 * again: a thread holds at most twice the bound, whatever the shapes of the filters clients send.
 */
export class SqliteStatements {
  private connection: Database.Database | null = null;
  private readonly kept: StatementLru<Database.Statement>;
  /** Characters of the texts dropped since the connection was opened (not finalized yet). */
  private droppedChars = 0;
  /** Times the connection was closed to finalize dropped statements (tests). */
  recycled = 0;

  constructor(
    /** Opens the connection (read-only, with its pragmas). */
    private readonly connect: () => Database.Database,
    maxChars = SQLITE_STATEMENT_CHARS,
    /** What to make of a statement when it is prepared (the walk workers read raw rows). */
    private readonly prepared: (statement: Database.Statement) => Database.Statement = (statement) => statement,
  ) {
    this.kept = new StatementLru(maxChars);
  }

  /** The statement of `sql`, prepared once and kept while it is used. Use it at once: a later call may close its connection. */
  statement(sql: string): Database.Statement {
    const kept = this.kept.get(sql);
    if (kept !== undefined) return kept;
    if (this.droppedChars >= this.kept.maxChars) {
      this.close();
      this.recycled += 1;
    }
    this.connection ??= this.connect();
    const statement = this.prepared(this.connection.prepare(sql));
    for (const [text] of this.kept.set(sql, statement)) this.droppedChars += text.length;
    return statement;
  }

  /** Closes the connection (every statement it prepared is finalized); the next statement opens it again. */
  close(): void {
    this.kept.clear();
    this.droppedChars = 0;
    const connection = this.connection;
    this.connection = null;
    connection?.close();
  }

  /** Statements kept, the characters of their texts, and those of the texts dropped and not yet finalized. */
  stats(): { statements: number; chars: number; droppedChars: number } {
    return { ...this.kept.stats(), droppedChars: this.droppedChars };
  }
}
