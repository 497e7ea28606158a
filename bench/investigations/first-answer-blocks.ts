/**
 * The longest event-loop block around each path's first answer, asked one at a time: the compiled
 * service (dist/, as `npm start` runs it) serves the snapshot, bench/event-loop-probe.mjs reads the
 * loop's longest delay after each answer (and 50 ms of quiet), then the same path is asked again with
 * `Accept-Encoding: gzip` (answered from the kept body):
 *
 *   npx tsx bench/investigations/first-answer-blocks.ts SNAPSHOT PATH...
 *
 * A SNAPSHOT is a SQLite file or a `postgres://...?schema=NAME` URL. Before and after in one run: the
 * same command from the checkout of the earlier commit (its own `dist/`), alternating.
 */
import { probedRequestsService } from '../support.js';

const [snapshot, ...paths] = process.argv.slice(2);
if (snapshot === undefined || paths.length === 0) throw new Error('usage: npx tsx bench/investigations/first-answer-blocks.ts SNAPSHOT PATH...');
const KEY = 'bench-key-0123456789';
const service = await probedRequestsService(snapshot, KEY);
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

try {
  await service.untilReady();
  await pause(500);
  await service.longestBlock();
  console.log('| path | encoding | status | bytes | ms | longest block ms |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (const path of paths) {
    for (const encoding of ['identity', 'gzip']) {
      const sent = performance.now();
      const response = await fetch(`${service.base}${path}`, { headers: { 'x-api-key': KEY, 'accept-encoding': encoding } });
      const bytes = (await response.arrayBuffer()).byteLength;
      const ms = performance.now() - sent;
      await pause(50);
      console.log(`| \`${path}\` | ${encoding} | ${response.status} | ${bytes} | ${ms.toFixed(0)} | ${(await service.longestBlock()).toFixed(1)} |`);
    }
  }
} finally {
  await service.stop();
}
