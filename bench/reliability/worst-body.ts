import { readFileSync } from 'node:fs';
import { worstRequests, type WorstRequest } from '../../test/reliability/worst-requests.js';
import { startChild } from '../support.js';

/**
 * (worst-body) The hostile-input decisions: the server CPU each of the worst requests under the limits costs
 * (test/reliability/worst-requests.ts: thousands of unknown fields, deep nesting, huge arrays, long
 * strings, repeated and unknown query parameters, 20,000 empty houses in a batch...), for each
 * service in its own process from the compiled build; then the /health latency while all of them are
 * sent over 4 connections for 5 s. CPU from /proc (10 ms ticks), so each request is sent `REPEAT`
 * times in a row and the total divided.
 */
export interface WorstBodyService {
  name: string;
  entry: string;
  env: Record<string, string>;
  key: string;
}

const REPEAT = 20;
const LOAD_MS = 5_000;

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function send(url: string, request: WorstRequest, key: string): Promise<{ status: number; bytes: number }> {
  const response = await fetch(url + request.url, {
    method: request.method,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: request.payload,
  });
  return { status: response.status, bytes: (await response.arrayBuffer()).byteLength };
}

async function healthDuringWorstLoad(url: string, requests: readonly WorstRequest[], key: string) {
  const until = performance.now() + LOAD_MS;
  let sent = 0;
  const sender = async (offset: number) => {
    for (let i = offset; performance.now() < until; i += 1) {
      await send(url, requests[i % requests.length]!, key);
      sent += 1;
    }
  };
  const times: number[] = [];
  const prober = async () => {
    while (performance.now() < until) {
      const start = performance.now();
      await (await fetch(`${url}/health`)).arrayBuffer();
      times.push(performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await Promise.all([sender(0), sender(5), sender(11), sender(17), prober()]);
  times.sort((a, b) => a - b);
  return { sent, p50: times[Math.floor(times.length / 2)]!, max: times[times.length - 1]! };
}

export async function worstBodyCosts(services: readonly WorstBodyService[], report: (line: string) => void): Promise<void> {
  report(`\n(worst-body) server CPU per worst request under the limits (each sent ${REPEAT} times), then /health while all are sent over 4 connections for ${LOAD_MS / 1000} s\n`);
  report('| service | classes | all answered as expected | largest answer B | median CPU ms | worst class | its CPU ms | worst requests sent | /health p50 ms | /health max ms |');
  report('|---|---:|---|---:|---:|---|---:|---:|---:|---:|');
  for (const service of services) {
    const child = await startChild(service.entry, service.env);
    const pid = child.child.pid!;
    const requests = worstRequests(service.name as Parameters<typeof worstRequests>[0]);
    const costs: { name: string; ms: number }[] = [];
    let allExpected = true;
    let largest = 0;
    for (const request of requests) {
      await send(child.url, request, service.key);
      const before = cpuMs(pid);
      for (let i = 0; i < REPEAT; i += 1) {
        const { status, bytes } = await send(child.url, request, service.key);
        allExpected &&= status === (request.status ?? 422);
        largest = Math.max(largest, bytes);
      }
      costs.push({ name: request.name, ms: (cpuMs(pid) - before) / REPEAT });
    }
    const health = await healthDuringWorstLoad(child.url, requests, service.key);
    await child.stop();
    const sorted = [...costs].sort((a, b) => a.ms - b.ms);
    const worst = sorted[sorted.length - 1]!;
    const median = sorted[Math.floor(sorted.length / 2)]!.ms;
    report(
      `| ${service.name} | ${requests.length} | ${allExpected ? 'yes' : 'NO'} | ${largest} | ${median.toFixed(1)} | ${worst.name} | ${worst.ms.toFixed(1)} | ${health.sent} | ${health.p50.toFixed(1)} | ${health.max.toFixed(1)} |`,
    );
  }
}
