/** Child process for the ensureSnapshot test: ensures a snapshot of a fixture at argv[2], prints { built }. */
import { ensureSnapshot } from '../../../src/ingest/nyc311/ensure-snapshot.js';

const [path, input] = process.argv.slice(2);
if (path === undefined || input === undefined) throw new Error('usage: ensure-snapshot-child.ts <snapshot path> <export csv>');
const result = await ensureSnapshot(path, { input: { kind: 'file', path: input } });
process.stdout.write(`${JSON.stringify({ built: result.built })}\n`);
