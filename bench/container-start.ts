/**
 * Container start time: from `podman run` to every /health of the container answering 200, for the
 * image with all three services (SERVICE=all) and with the requests service alone; RUNS runs each,
 * alternating, read-only root; and, as the baseline of the same run, `podman run` of the image doing
 * nothing (the container runtime's own cost). Also the image's size. Needs the image (npm run test:containers
 * builds it as localhost/city-services:test; IMAGE names another) and CONTAINERS_CONF as
 * scripts/podman-env.sh sets it.
 *   CONTAINERS_CONF=deploy/podman/containers.conf npx tsx bench/container-start.ts
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const IMAGE = process.env.IMAGE ?? 'localhost/city-services:test';
const RUNS = Number(process.env.RUNS ?? 7);

async function podman(...args: string[]): Promise<string> {
  return (await run('podman', args)).stdout.trim();
}

async function healthy(url: string): Promise<void> {
  for (;;) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(1000) })).status === 200) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function startOnce(service: 'all' | 'requests'): Promise<number> {
  const name = `city-services-bench-${process.pid}`;
  const started = performance.now();
  await podman('run', '--detach', '--name', name, '--read-only', '--env', `SERVICE=${service}`, '--env', 'API_KEY=bench-key-0123456789',
    '--publish', '127.0.0.1::8001', '--publish', '127.0.0.1::8002', '--publish', '127.0.0.1::8003', IMAGE);
  const ports = service === 'all' ? [8001, 8002, 8003] : [8003];
  const urls = await Promise.all(ports.map(async (port) => `http://${(await podman('port', name, `${port}/tcp`)).split('\n')[0] ?? ''}/health`));
  await Promise.all(urls.map(healthy));
  const elapsed = performance.now() - started;
  await podman('rm', '--force', '--time', '0', name);
  return elapsed;
}

/** The container runtime alone: `podman run` of the same image doing nothing (`true`), to its exit. */
async function runtimeOnce(): Promise<number> {
  const started = performance.now();
  await podman('run', '--rm', '--read-only', '--entrypoint', 'true', IMAGE);
  return performance.now() - started;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

const times: Record<'all' | 'requests' | 'runtime alone', number[]> = { all: [], requests: [], 'runtime alone': [] };
await startOnce('all');
for (let i = 0; i < RUNS; i++) {
  times.all.push(await startOnce('all'));
  times.requests.push(await startOnce('requests'));
  times['runtime alone'].push(await runtimeOnce());
}
const size = await podman('image', 'inspect', IMAGE, '--format', '{{.Size}}');
console.log(`image ${IMAGE}: ${(Number(size) / 1e6).toFixed(1)} MB uncompressed`);
for (const [service, values] of Object.entries(times)) {
  const what = service === 'runtime alone' ? 'runtime alone: podman run of `true` to its exit' : `SERVICE=${service}: podman run to /health 200`;
  console.log(`${what}, median ${(median(values) / 1000).toFixed(2)} s (min ${(Math.min(...values) / 1000).toFixed(2)}, max ${(Math.max(...values) / 1000).toFixed(2)}, ${values.length} runs)`);
}
console.log(`load average: ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
