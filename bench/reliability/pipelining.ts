import type autocannon from 'autocannon';
import { connect, type Socket } from 'node:net';
import { startChild } from '../support.js';

/**
 * (p) Pipelining clients that never read (the hostile-input decisions): N connections each write P pipelined
 * copies of the service's costliest request and never read an answer, while a normal client probes
 * /health every 100 ms. Reports the service's RSS before, at its peak and at the end, and the /health
 * latency meanwhile. The backpressure (src/platform/connection-backpressure.ts) stops reading such
 * connections and closes them once their output has not moved for 10 s, so the end is after that.
 * Usage: part `p` of bench/reliability.ts (RELIABILITY_PARTS=p npx tsx bench/reliability.ts requests).
 */
export interface PipeliningService {
  entry: string;
  env: Record<string, string>;
  requests: autocannon.Request[];
}

const CLIENT_COUNTS = (process.env.PIPELINING_CLIENTS ?? '6,30').split(',').map(Number);
const REQUESTS_PER_CLIENT = Number(process.env.PIPELINING_REQUESTS ?? 500);
const WATCH_MS = Number(process.env.PIPELINING_WATCH_MS ?? 14_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The service's costliest request as raw HTTP/1.1 (requests: a page of 1000). */
function rawRequest(service: PipeliningService): string {
  const spec = service.requests[0]!;
  const path = spec.method === 'GET' ? '/v1/service-requests?limit=1000' : spec.path!;
  const headers = Object.entries(spec.headers ?? {}).map(([name, value]) => `${name}: ${String(value)}\r\n`).join('');
  const body = spec.body === undefined ? '' : String(spec.body);
  const length = body ? `content-length: ${Buffer.byteLength(body)}\r\n` : '';
  return `${spec.method} ${path} HTTP/1.1\r\nhost: bench\r\n${headers}${length}\r\n${body}`;
}

function nonReadingClient(port: number, request: string): Socket {
  const socket = connect(port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => {});
  socket.once('connect', () => socket.write(request.repeat(REQUESTS_PER_CLIENT)));
  return socket;
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))] ?? NaN;

export async function pipeliningWithoutReading(present: [string, PipeliningService][], report: (line: string) => void): Promise<void> {
  report(`\n(p) pipelining clients that never read: N connections x ${REQUESTS_PER_CLIENT} pipelined requests each (requests: pages of 1000), ${WATCH_MS / 1000} s; /health probed every 100 ms\n`);
  report('| service | clients | RSS before MB | RSS peak MB | RSS at end MB | /health probes | p50 ms | max ms | failed probes |');
  report('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [name, service] of present) {
    for (const clients of CLIENT_COUNTS) {
      const child = await startChild(service.entry, service.env, '/ready');
      try {
        const { port } = new URL(child.url);
        // Warm-up: one of each request, answered and read.
        await fetch(`${child.url}/health`);
        const before = child.rssMb();
        const sockets = Array.from({ length: clients }, () => nonReadingClient(Number(port), rawRequest(service)));
        let peak = before;
        let failed = 0;
        const latencies: number[] = [];
        const until = Date.now() + WATCH_MS;
        while (Date.now() < until) {
          const started = Date.now();
          try {
            const health = await fetch(`${child.url}/health`, { signal: AbortSignal.timeout(5000) });
            await health.arrayBuffer();
            if (health.status !== 200) failed += 1;
          } catch {
            failed += 1;
          }
          latencies.push(Date.now() - started);
          peak = Math.max(peak, child.rssMb());
          await sleep(100);
        }
        const end = child.rssMb();
        for (const socket of sockets) socket.destroy();
        report(`| ${name} | ${clients} | ${before} | ${peak} | ${end} | ${latencies.length} | ${percentile(latencies, 50)} | ${Math.max(...latencies)} | ${failed} |`);
      } finally {
        await child.stop();
      }
    }
  }
}
