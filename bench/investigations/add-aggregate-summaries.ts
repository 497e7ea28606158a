/**
 * Writes the aggregate summaries (src/snapshot/aggregate-summaries.ts) into a snapshot loaded
 * without them, with the code the snapshot command runs after its load, and prints how long it took
 * and the rows and bytes of the summary tables:
 *
 *   npx tsx bench/investigations/add-aggregate-summaries.ts FILE.sqlite
 *   npx tsx bench/investigations/add-aggregate-summaries.ts 'postgres://postgres@127.0.0.1:5432/DB?schema=NAME'
 *
 * The benchmark of the summaries serves one snapshot before and after: loaded once by the snapshot
 * command of main, copied, then summarised here.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { SUMMARY_TABLES } from '../../src/snapshot/aggregate-summaries.js';
import { writePostgresAggregateSummaries } from '../../src/ingest/nyc311/postgres-aggregate-summaries.js';
import { writeSqliteAggregateSummaries } from '../../src/ingest/nyc311/sqlite-aggregate-summaries.js';
import { parsePostgresTarget, quoteIdentifier } from '../../src/shared/postgres-schema.js';

const target = process.argv[2];
if (target === undefined) throw new Error('usage: add-aggregate-summaries.ts FILE.sqlite | postgres://...?schema=NAME');

const started = performance.now();
let sizes: unknown;
let writeSeconds: number;
if (target.startsWith('postgres://')) {
  const { connectionString, schema } = parsePostgresTarget(target);
  const client = new pg.Client({ connectionString });
  await client.connect();
  await client.query('BEGIN');
  await writePostgresAggregateSummaries(client, schema);
  await client.query('COMMIT');
  writeSeconds = (performance.now() - started) / 1000;
  sizes = await Promise.all(
    SUMMARY_TABLES.map(async (name) => {
      const table = `${quoteIdentifier(schema)}.${name}`;
      const { rows } = await client.query(`SELECT count(*)::integer AS rows, pg_total_relation_size('${table}')::bigint AS bytes FROM ${table}`);
      return { table: name, ...rows[0] };
    }),
  );
  await client.end();
} else {
  const db = new Database(target);
  db.pragma('temp_store = MEMORY');
  db.pragma('cache_size = -65536');
  db.transaction(() => writeSqliteAggregateSummaries(db))();
  db.exec('ANALYZE');
  writeSeconds = (performance.now() - started) / 1000;
  sizes = SUMMARY_TABLES.map((name) => ({
    table: name,
    ...(db.prepare(`SELECT (SELECT count(*) FROM ${name}) AS rows, (SELECT sum(pgsize) FROM dbstat WHERE name = ? OR name LIKE ?) AS bytes`).get(name, `${name}_%`) as object),
  }));
  db.close();
}
process.stdout.write(`${JSON.stringify({ target, writeSeconds, rssMiB: Math.round(process.resourceUsage().maxRSS / 1024), sizes })}\n`);
