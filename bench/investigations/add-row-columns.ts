/**
 * Writes the row columns (src/snapshot/row-columns.ts) into a SQLite snapshot written without them,
 * with the writer the snapshot command runs as it stores the rows, fed the rows in list order, and
 * prints how long it took and the bytes it added:
 *
 *   npx tsx bench/investigations/add-row-columns.ts FILE.sqlite
 *
 * The scale benchmark serves one snapshot before and after: loaded once, copied, then given its row
 * columns here (an hour of ingestion saved at 50x).
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { SqliteRowColumnsWriter } from '../../src/ingest/nyc311/sqlite-row-columns.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest } from '../../src/snapshot/service-request.js';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: add-row-columns.ts FILE.sqlite');
const sizeBefore = statSync(path).size;
const started = performance.now();
const db = new Database(path);
db.pragma('journal_mode = OFF');
db.pragma('synchronous = OFF');
// A statement cannot run while another one iterates: the rows are read a batch at a time.
const batch = db.prepare(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM service_requests INDEXED BY service_requests_created_at_id WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT 50000`);
db.exec('BEGIN');
const writer = new SqliteRowColumnsWriter(db);
let after: [string, number] = ['', 0];
for (;;) {
  const rows = batch.all(...after) as ServiceRequest[];
  for (const row of rows) writer.add(row);
  const last = rows.at(-1);
  if (last === undefined) break;
  after = [last.created_at, last.id];
}
writer.finish();
db.exec('COMMIT');
db.close();
console.log(JSON.stringify({ seconds: Number(((performance.now() - started) / 1000).toFixed(1)), bytes_added: statSync(path).size - sizeBefore }));
