import { REALISTIC_TICKETS } from './realistic-tickets.js';
import { load, startChild, table, type LoadResult } from './support.js';

/**
 * Ticket classifier throughput (the classifier throughput target): in one run on the same machine, a bare node:http server
 * answering the same JSON (the ceiling), GET /health and POST /v1/classify with realistic tickets,
 * and for reference a minimal Fastify app (bench/minimal-fastify-server.mjs: one POST route with a
 * body schema, none of the platform's features), which tells what Fastify alone leaves of the ceiling.
 * Each server runs in its own process with its normal logging (to /dev/null); autocannon runs here.
 * Targets: classify >= 70% of the bare server's req/s, p99 < 10 ms at 50 connections, RSS < 100 MB.
 * Usage: npx tsx bench/tickets.ts [seconds per case, default 10]
 */
const seconds = Number(process.argv[2] ?? 10);
const connections = 50;
const json = { 'content-type': 'application/json' };
const classifyRequests = REALISTIC_TICKETS.map((ticket) => ({ method: 'POST' as const, path: '/v1/classify', headers: json, body: JSON.stringify(ticket) }));

const bare = await startChild('bench/bare-server.mjs', {}, '/');
const minimal = await startChild('bench/minimal-fastify-server.mjs', {}, '/');
const tickets = await startChild('src/services/tickets/main.ts', { API_KEY: 'bench-key-0123456789' });
const results: LoadResult[] = [];
try {
  // warm-up
  await load('warm-up', { url: tickets.url, connections, durationSeconds: 2, requests: classifyRequests.map((r) => ({ ...r, headers: { ...json, 'x-api-key': 'bench-key-0123456789' } })) });
  results.push(await load('bare node:http, same JSON', { url: `${bare.url}/v1/classify`, connections, durationSeconds: seconds, method: 'POST', headers: json, body: JSON.stringify(REALISTIC_TICKETS[0]) }));
  results.push(
    await load('minimal Fastify app, same JSON (reference)', { url: minimal.url, connections, durationSeconds: seconds, requests: classifyRequests }),
  );
  results.push(await load('GET /health', { url: `${tickets.url}/health`, connections, durationSeconds: seconds }));
  results.push(
    await load('POST /v1/classify (8 realistic tickets, with key)', {
      url: tickets.url,
      connections,
      durationSeconds: seconds,
      requests: classifyRequests.map((r) => ({ ...r, headers: { ...json, 'x-api-key': 'bench-key-0123456789' } })),
    }),
  );
  const rss = tickets.rssMb();
  const [ceiling, reference, , classify] = results;
  console.log(table(results));
  console.log(`\nminimal Fastify / bare = ${((reference!.requestsPerSecond / ceiling!.requestsPerSecond) * 100).toFixed(1)}% (reference)`);
  console.log(`classify / bare = ${((classify!.requestsPerSecond / ceiling!.requestsPerSecond) * 100).toFixed(1)}% (target >= 70%)`);
  console.log(`classify p99 = ${classify!.p99Ms} ms at ${connections} connections (target < 10 ms)`);
  console.log(`ticket service RSS after the run = ${rss} MB (target < 100 MB)`);
  console.log(`node ${process.version}, ${seconds} s per case, ${connections} connections`);
} finally {
  await bare.stop();
  await minimal.stop();
  await tickets.stop();
}
