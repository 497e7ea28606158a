import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { resolve as resolvePath } from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { BATCH_EXAMPLE, ESTIMATE_EXAMPLE, EXPLAIN_BATCH_EXAMPLE } from '../../src/services/houses/openapi-example.js';

/**
 * Floods of one route (docs/reliability.md, "Work budgets"): 20 connections send one kind of request
 * as fast as the service answers, from a worker thread (autocannon), while this thread times `/health`
 * and the service's cheapest `/v1` route, one request at a time each. Shared by the reliability test
 * (test/reliability/flood.test.ts) and the benchmark (bench/flood.ts).
 */
export type FloodService = 'tickets' | 'houses' | 'requests';

export interface FloodRoute {
  service: FloodService;
  /** The kind of route, e.g. `explanation batch of 100`. */
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /**
   * How long the tests flood it, when longer than their default: a route whose one answer may take
   * longer than that under a flood of 20 (the whole snapshot exported) must be answered at least once.
   */
  seconds?: number;
}

/** The cheapest /v1 route of each service: the one timed during a flood. */
export const CHEAP_ROUTES: Record<FloodService, string> = {
  tickets: '/v1/categories',
  houses: '/v1/model',
  requests: '/v1/dataset',
};

const GZIP = { 'accept-encoding': 'gzip' };
const hundred = <T>(items: readonly T[]): T[] => Array.from({ length: 100 }, (_, i) => items[i % items.length] as T);
const TICKET = JSON.stringify({ subject: 'My parcel is lost', body: `Where is my order? ${'It was due last week and nothing came. '.repeat(120)}` });

/** One route of each kind of every service (a route kind: what its work costs, not its path). */
export const FLOOD_ROUTES: readonly FloodRoute[] = [
  { service: 'tickets', name: 'classify a ticket of 5,000 characters', method: 'POST', path: '/v1/classify', body: TICKET },
  { service: 'tickets', name: 'categories (the cheap route itself)', method: 'GET', path: '/v1/categories' },
  { service: 'houses', name: 'one estimate', method: 'POST', path: '/v1/estimates', body: JSON.stringify(ESTIMATE_EXAMPLE.request) },
  { service: 'houses', name: 'estimate batch of 100', method: 'POST', path: '/v1/estimates/batch', body: JSON.stringify({ houses: hundred(BATCH_EXAMPLE.request.houses) }) },
  { service: 'houses', name: 'one explanation', method: 'POST', path: '/v1/estimates/explain', body: JSON.stringify(ESTIMATE_EXAMPLE.request) },
  {
    service: 'houses',
    name: 'explanation batch of 100',
    method: 'POST',
    path: '/v1/estimates/explain/batch',
    body: JSON.stringify({ houses: hundred(EXPLAIN_BATCH_EXAMPLE.request.houses) }),
  },
  { service: 'houses', name: 'model card (the cheap route itself)', method: 'GET', path: '/v1/model' },
  { service: 'requests', name: 'JSON page of 1000', method: 'GET', path: '/v1/service-requests?limit=1000' },
  { service: 'requests', name: 'CSV page of 1000, gzip', method: 'GET', path: '/v1/service-requests?limit=1000&format=csv&borough=queens', headers: GZIP },
  { service: 'requests', name: 'GeoJSON page of 1000, brotli', method: 'GET', path: '/v1/service-requests?limit=1000&format=geojson', headers: { 'accept-encoding': 'br' } },
  { service: 'requests', name: 'one request by id', method: 'GET', path: '/v1/service-requests/63759954' },
  { service: 'requests', name: 'count of two boroughs', method: 'GET', path: '/v1/service-requests/count?borough=queens&borough=bronx' },
  { service: 'requests', name: 'facets of a channel', method: 'GET', path: '/v1/facets?field=complaint_type&channel=phone' },
  { service: 'requests', name: 'complaint types of a borough', method: 'GET', path: '/v1/complaint-types?borough=brooklyn' },
  { service: 'requests', name: 'daily numbers of a channel (rows walked)', method: 'GET', path: '/v1/stats/daily?channel=online' },
  { service: 'requests', name: 'monthly numbers', method: 'GET', path: '/v1/stats/monthly?status=closed' },
  { service: 'requests', name: 'CSV export, uncompressed', method: 'GET', path: '/v1/exports/service-requests?format=csv', seconds: 10 },
  { service: 'requests', name: 'GeoJSON export, uncompressed', method: 'GET', path: '/v1/exports/service-requests?format=geojson&borough=queens' },
  { service: 'requests', name: 'CSV export, gzip', method: 'GET', path: '/v1/exports/service-requests?format=csv&borough=brooklyn', headers: GZIP },
  { service: 'requests', name: 'dataset (the cheap route itself)', method: 'GET', path: '/v1/dataset' },
];

export interface FloodResult {
  route: FloodRoute;
  /** The longest /health answer during the flood, ms. */
  healthMaxMs: number;
  /** The median answer of the cheap route during the flood, ms. */
  cheapP50Ms: number;
  /** Answers of the flooded route per second (every status). */
  floodedPerSecond: number;
  /** 200 answers of the flooded route. */
  ok: number;
  /** 503 answers (overloaded) of the flooded route. */
  overloaded: number;
  /** Other answers than 200 and 503, and connection errors, of the flooded route. */
  unexpected: number;
  /** Statuses of the probes that were not 200. */
  probeFailures: number;
}

interface CannonSummary {
  requests: { total: number };
  duration: number;
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number } | undefined>;
}

/** autocannon in a worker thread, so that its work never delays the timed requests of this one. */
function cannonInWorker(options: Record<string, unknown>): Promise<CannonSummary> {
  const autocannonPath = createRequire(import.meta.url).resolve('autocannon');
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const autocannon = require(${JSON.stringify(autocannonPath)});
    autocannon(workerData, (error, result) => parentPort.postMessage(error ? { error: String(error) } : JSON.parse(JSON.stringify(result))));
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: options });
    worker.once('message', (message: CannonSummary & { error?: string }) => {
      void worker.terminate();
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message);
    });
    worker.once('error', reject);
  });
}

/** One GET on a kept-alive connection: its status and duration in ms. */
function timedGet(agent: Agent, url: string, headers: Record<string, string>): Promise<{ status: number; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const sent = request(url, { agent, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }));
    });
    sent.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    sent.end();
  });
}

/** Times `url` one request at a time (a pause of `gapMs` between two) until `until` resolves. */
async function probe(url: string, headers: Record<string, string>, until: Promise<unknown>, gapMs = 10): Promise<{ times: number[]; failures: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const flooding = { done: false };
  void until.finally(() => (flooding.done = true));
  const times: number[] = [];
  let failures = 0;
  while (!flooding.done) {
    const { status, ms } = await timedGet(agent, url, headers);
    times.push(ms);
    if (status !== 200) failures += 1;
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  agent.destroy();
  return { times, failures };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
}

/**
 * Floods `route` on the service at `baseUrl` with `connections` connections for `seconds`, timing
 * /health and the service's cheap route meanwhile.
 */
export async function flood(baseUrl: string, route: FloodRoute, apiKey: string, seconds: number, connections = 20): Promise<FloodResult> {
  const headers = { 'x-api-key': apiKey, ...(route.body === undefined ? {} : { 'content-type': 'application/json' }), ...route.headers };
  const cannon = cannonInWorker({ url: `${baseUrl}${route.path}`, method: route.method, body: route.body, headers, connections, duration: seconds, timeout: 30 });
  // The probes start once the flood has begun.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const [summary, health, cheap] = await Promise.all([
    cannon,
    probe(`${baseUrl}/health`, {}, cannon),
    probe(`${baseUrl}${CHEAP_ROUTES[route.service]}`, { 'x-api-key': apiKey }, cannon),
  ]);
  const count = (status: string): number => summary.statusCodeStats[status]?.count ?? 0;
  const answered = Object.values(summary.statusCodeStats).reduce((sum, stats) => sum + (stats?.count ?? 0), 0);
  return {
    route,
    healthMaxMs: Math.max(...health.times),
    cheapP50Ms: median(cheap.times),
    floodedPerSecond: answered / summary.duration,
    ok: count('200'),
    overloaded: count('503'),
    unexpected: answered - count('200') - count('503') + summary.errors + summary.timeouts,
    probeFailures: health.failures + cheap.failures,
  };
}

/** The table of bench/README.md. */
export function floodTable(results: readonly FloodResult[]): string {
  const lines = [
    '| service | flooded route (20 connections) | /health max ms | cheap route p50 ms | flooded answers/s | 200 | 503 overloaded |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    lines.push(`| ${r.route.service} | ${r.route.name} | ${r.healthMaxMs.toFixed(1)} | ${r.cheapP50Ms.toFixed(1)} | ${r.floodedPerSecond.toFixed(0)} | ${r.ok} | ${r.overloaded} |`);
  }
  return lines.join('\n');
}

export interface FloodTarget {
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * A service started from the sources of the tree at `root` as its start command would (node with
 * tsx), its working directory that tree; resolves once it listens. Its log lines are read and dropped
 * (they are not kept: a flood writes tens of thousands).
 */
export async function startFloodTarget(root: string, service: FloodService, env: Record<string, string>): Promise<FloodTarget> {
  const child = spawn(process.execPath, ['--import', 'tsx', resolvePath(root, `src/services/${service}/main.ts`)], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const baseUrl = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${service} did not start: ${out}`)), 60_000);
    const look = (chunk: Buffer): void => {
      out += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match?.[1] === undefined) return;
      clearTimeout(timer);
      child.stdout.off('data', look);
      child.stdout.on('data', () => undefined);
      resolveUrl(match[1]);
    };
    child.stdout.on('data', look);
    void exited.then(() => reject(new Error(`${service} exited: ${out}`)));
  });
  // Ready (the model loaded, the snapshot open), then a second for what a service does once it
  // listens (the deferred schema compilation).
  for (let tries = 0; tries < 600; tries++) {
    const ready = await timedGet(new Agent(), `${baseUrl}/ready`, {});
    if (ready.status === 200) break;
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  await new Promise((resolveWait) => setTimeout(resolveWait, 1_000));
  return {
    baseUrl,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
