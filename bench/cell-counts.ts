/**
 * GET /v1/stats/cells on a snapshot file: the counts per cell of the five boroughs' box read from the
 * row columns, and the same without them (ROW_COLUMNS_MAX_MB=0: the walk worker's SQL), in one run.
 * Every URL differs (created_from moves by a second), so no kept answer is sent.
 *
 *   flock /work/locks/bench.lock npx tsx bench/cell-counts.ts --file /tmp/history-50x.sqlite [--runs 7]
 */
import { parseArgs } from 'node:util';
import { buildRequestsApp } from '../src/services/requests/app.js';
import { readRequestSettings } from '../src/services/requests/settings.js';

const { values } = parseArgs({ options: { file: { type: 'string' }, runs: { type: 'string', default: '7' } } });
if (values.file === undefined) throw new Error('--file is required');
const runs = Number(values.runs);
const KEY = 'bench-key-cell-counts-0123456789';
const BOX = '-74.26,40.49,-73.69,40.92';
const CASES: [string, string][] = [
  ['boroughs, 0.01', `bbox=${BOX}&cell=0.01`],
  ['boroughs, 0.1', `bbox=${BOX}&cell=0.1`],
  ['boroughs, 0.01, queens', `bbox=${BOX}&cell=0.01&borough=queens`],
  ['count of the box (reference)', `bbox=${BOX}`],
];

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

for (const [engine, env] of [
  ['row columns', {}],
  ['SQL (no row columns)', { ROW_COLUMNS_MAX_MB: '0' }],
] as const) {
  const app = await buildRequestsApp(readRequestSettings({ API_KEY: KEY, DATABASE_URL: values.file, ...env }), { logger: false });
  await app.ready();
  await app.inject({ method: 'GET', url: '/ready' });
  for (const [name, query] of CASES) {
    const path = name.startsWith('count') ? '/v1/service-requests/count' : '/v1/stats/cells';
    const times: number[] = [];
    let status = 0;
    for (let run = 0; run < runs; run++) {
      const from = `2016-01-01T00:00:${String(run).padStart(2, '0')}`;
      const started = performance.now();
      const response = await app.inject({ method: 'GET', url: `${path}?${query}&created_from=${from}`, headers: { 'x-api-key': KEY } });
      times.push(performance.now() - started);
      status = response.statusCode;
    }
    console.log(`| ${engine} | ${name} | ${status} | ${median(times).toFixed(0)} | ${Math.max(...times).toFixed(0)} |`);
  }
  await app.close();
}
