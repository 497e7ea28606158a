import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';
import { createKey, keysCommand, within } from '../support/key-files.js';
import { IMAGE, podman, podmanStatus, waitFor200 } from './podman.js';

/**
 * compose.yaml brought up with podman-compose (docs/deploy.md), in the order an operator follows
 * with podman: PostgreSQL and Redis, the snapshot job, then the replicas, tickets, houses and the proxy.
 */
const run = promisify(execFile);
const PODMAN_COMPOSE = process.env.PODMAN_COMPOSE ?? 'podman-compose';
const PROJECT = `city-services-test-${process.pid}`;
const MAIN_KEY = `main-${randomBytes(8).toString('hex')}`;
const RATE_KEY = `rate-${randomBytes(8).toString('hex')}`;
const METRICS_KEY = `metrics-${randomBytes(12).toString('hex')}`;
const BUDGET = 120;
/** Requests a replica may let through past the shared budget: those it counted alone while Redis was late. */
const COUNTED_LOCALLY_SLACK = 5;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

let env: NodeJS.ProcessEnv = {};
const url = { proxy: '', a: '', b: '' };
/** A network range of this run's own (a range left by an earlier run cannot collide), and the proxy's address in it. */
const SUBNET_BYTE = 100 + (process.pid % 150);
const PROXY_ADDRESS = `172.30.${SUBNET_BYTE}.250`;
/** The key file's directory, mounted read-only into every service (API_KEYS_DIR); readable by the services' user. */
const keysDirectory = mkdtempSync(join(tmpdir(), 'compose-api-keys-'));
chmodSync(keysDirectory, 0o755);
const keysFile = join(keysDirectory, 'api-keys.json');
let clientKey = { key: '', id: '' };

async function compose(...args: string[]): Promise<void> {
  await composeWith({}, ...args);
}

async function composeWith(extraEnv: NodeJS.ProcessEnv, ...args: string[]): Promise<void> {
  await run(PODMAN_COMPOSE, ['--project-name', PROJECT, '--file', 'compose.yaml', ...args], {
    cwd: REPO_ROOT, env: { ...env, ...extraEnv }, maxBuffer: 64 * 1024 * 1024,
  });
}

const container = (service: string): string => `${PROJECT}_${service}_1`;

async function get(base: string, path: string, key = MAIN_KEY): Promise<Response> {
  return fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
}

interface Page { items: { id: number }[]; next_cursor: string | null }

beforeAll(async () => {
  const [proxyPort, aPort, bPort, ticketsPort, housesPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  clientKey = await createKey(keysFile, '--name', 'Compose client', '--services', 'requests,tickets');
  env = {
    ...process.env,
    IMAGE,
    API_KEY: `${MAIN_KEY},${RATE_KEY}`,
    API_KEYS_DIR: keysDirectory,
    CURSOR_SECRET: randomBytes(32).toString('hex'),
    METRICS_KEY,
    LOADER_PASSWORD: randomBytes(12).toString('hex'),
    READER_PASSWORD: randomBytes(12).toString('hex'),
    REDIS_PASSWORD: randomBytes(16).toString('hex'),
    COMPOSE_SUBNET: `172.30.${SUBNET_BYTE}.0/24`,
    PROXY_ADDRESS,
    RATE_LIMIT: `${BUDGET}/minute`,
    REQUESTS_PORT: String(proxyPort),
    REQUESTS_A_PORT: String(aPort),
    REQUESTS_B_PORT: String(bPort),
    TICKETS_PORT: String(ticketsPort),
    HOUSES_PORT: String(housesPort),
  };
  url.proxy = `http://127.0.0.1:${proxyPort}`;
  url.a = `http://127.0.0.1:${aPort}`;
  url.b = `http://127.0.0.1:${bPort}`;
  await compose('up', '--detach', '--no-deps', 'postgres', 'redis');
  for (let i = 0; (await podmanStatus('exec', container('postgres'), 'pg_isready', '-q', '-h', '127.0.0.1')) !== 0; i++) {
    if (i > 120) throw new Error('PostgreSQL of the compose set did not start');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await compose('run', '--rm', '--no-deps', 'snapshot');
  await compose('up', '--detach', '--no-deps', 'requests-a', 'requests-b', 'tickets', 'houses', 'proxy');
  await Promise.all([waitFor200(`${url.a}/ready`), waitFor200(`${url.b}/ready`), waitFor200(`${url.proxy}/ready`)]);
}, 600_000);

afterAll(async () => {
  if (Object.keys(env).length > 0) await compose('down', '--volumes', '--timeout', '2').catch(() => undefined);
  rmSync(keysDirectory, { recursive: true, force: true });
}, 300_000);

describe('compose.yaml: two requests replicas behind the proxy', () => {
  it('serves the snapshot loaded by the one-shot job, read by the read-only role', async () => {
    const dataset = await get(url.proxy, '/v1/dataset');
    expect(dataset.status).toBe(200);
    expect(await podman('inspect', container('snapshot'), '--format', '{{.State.ExitCode}}').catch(() => '0')).toBe('0');
    const write = await podmanStatus('exec', container('postgres'), 'psql', '-h', '/var/run/postgresql', '-U', 'postgres', '-d', 'city', '-c',
      'SET ROLE reader; CREATE TABLE nyc311.written (x int)');
    expect(write).not.toBe(0);
  });

  it('a refresh loaded into a new schema is readable by the read-only role at once', async () => {
    await composeWith({ SNAPSHOT_SCHEMA: 'nyc311_refresh' }, 'run', '--rm', '--no-deps', 'snapshot');
    const rows = await podman('exec', container('postgres'), 'psql', '-h', '/var/run/postgresql', '-U', 'reader', '-d', 'city', '-tAc',
      'SELECT count(*) FROM nyc311_refresh.service_requests');
    expect(Number(rows)).toBe(109_915);
  });

  it('a cursor made by replica A is accepted by replica B (the same CURSOR_SECRET)', async () => {
    const first = await get(url.a, '/v1/service-requests?limit=5&borough=queens');
    expect(first.status).toBe(200);
    const cursor = (await first.json() as Page).next_cursor;
    expect(cursor).not.toBeNull();
    const path = `/v1/service-requests?limit=5&borough=queens&cursor=${encodeURIComponent(cursor ?? '')}`;
    const onB = await get(url.b, path);
    expect(onB.status).toBe(200);
    expect(await onB.json()).toEqual(await (await get(url.a, path)).json());
  });

  it('/metrics can be scraped from each replica', async () => {
    for (const base of [url.a, url.b]) {
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_KEY}` } });
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('http_requests_total{');
    }
  });

  it('a key of the key file (mounted read-only) opens both replicas; its revoke reaches both within 2 s, no restart', async () => {
    for (const base of [url.a, url.b]) expect((await get(base, '/v1/dataset', clientKey.key)).status).toBe(200);
    expect((await keysCommand(keysFile, 'revoke', clientKey.id)).code).toBe(0);
    const took = await within(2_000, async () => (await get(url.a, '/v1/dataset', clientKey.key)).status === 401 && (await get(url.b, '/v1/dataset', clientKey.key)).status === 401);
    expect(took).toBeLessThan(2_000);
    // The replicas were not restarted: the key of API_KEY is still served, by the same containers.
    for (const base of [url.a, url.b]) expect((await get(base, '/v1/dataset')).status).toBe(200);
    for (const service of ['requests-a', 'requests-b']) {
      expect(await podman('inspect', container(service), '--format', '{{.RestartCount}}')).toBe('0');
      const logs = await podman('logs', container(service));
      expect(logs).toContain(`"key_refused":"revoked"`);
      expect(logs).not.toContain(clientKey.key);
    }
  });

  it('one rate-limit budget across both replicas (Redis)', async () => {
    // The budget is counted per minute of the clock: a run that could cross into the next minute waits for it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 40_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 200));
    const statuses: number[] = [];
    for (let i = 0; i < BUDGET; i++) statuses.push((await get(i % 2 === 0 ? url.a : url.b, '/v1/service-requests/count', RATE_KEY)).status);
    expect(statuses.every((status) => status === 200)).toBe(true);
    // Past the budget, both replicas refuse. A request whose Redis command missed its deadline on a busy
    // machine is counted by its replica alone (the breaker), so a replica may let a few more through:
    // never the half budget (BUDGET / 2 more each) that counting per replica would.
    for (const base of [url.a, url.b]) {
      let over = await get(base, '/v1/service-requests/count', RATE_KEY);
      for (let extra = 0; over.status === 200 && extra < COUNTED_LOCALLY_SLACK; extra++) {
        // A pause, so that a breaker opened by a late command has tried Redis again (after 500 ms).
        await new Promise((resolve) => setTimeout(resolve, 300));
        over = await get(base, '/v1/service-requests/count', RATE_KEY);
      }
      expect(over.status).toBe(429);
      expect((await over.json() as { error: { code: string } }).error.code).toBe('rate_limited');
    }
  }, 120_000);

  it('no secret on the command line of any process of the containers (ps) nor in their commands (inspect)', async () => {
    const secrets = [env.LOADER_PASSWORD, env.READER_PASSWORD, env.REDIS_PASSWORD, env.CURSOR_SECRET, METRICS_KEY, MAIN_KEY, RATE_KEY].map(String);
    for (const service of ['postgres', 'redis', 'requests-a', 'requests-b', 'tickets', 'houses', 'proxy']) {
      const commandLines = await podman('exec', container(service), 'sh', '-c', 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done');
      expect(commandLines.length, service).toBeGreaterThan(0);
      const inspected = await podman('inspect', container(service), '--format', '{{json .Config.Cmd}} {{json .Config.Entrypoint}} {{json .Args}}');
      for (const secret of secrets) {
        expect(commandLines.includes(secret), `${service}: a secret in ps`).toBe(false);
        expect(inspected.includes(secret), `${service}: a secret in inspect`).toBe(false);
      }
    }
  });

  it('Redis refuses a client without the password', async () => {
    const answer = await podman('exec', container('redis'), 'redis-cli', 'ping').catch((error: unknown) => String(error));
    expect(answer).toMatch(/NOAUTH/);
  });

  it('behind the proxy the log names the client, not the proxy; X-Forwarded-For is believed from the proxy alone', async () => {
    const viaProxy = `via-proxy-${randomBytes(6).toString('hex')}`;
    const direct = `direct-${randomBytes(6).toString('hex')}`;
    for (const [base, id] of [[url.proxy, viaProxy], [url.a, direct]] as const) {
      const response = await fetch(`${base}/v1/service-requests/count`, { headers: { 'x-api-key': MAIN_KEY, 'x-request-id': id, 'x-forwarded-for': '198.51.100.77' } });
      expect(response.status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lines = `${await podman('logs', container('requests-a'))}\n${await podman('logs', container('requests-b'))}`
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { request_id?: string; client_address?: string });
    const addressOf = (id: string) => lines.find((line) => line.request_id === id)?.client_address;
    // Through the proxy: the address the proxy saw (the host's side of the network), not the proxy's,
    // nor the one the client wrote itself.
    expect(addressOf(viaProxy)).toMatch(/^[0-9.:a-f]+$/);
    expect(addressOf(viaProxy)).not.toBe(PROXY_ADDRESS);
    expect(addressOf(viaProxy)).not.toBe('198.51.100.77');
    // Straight to the replica: its X-Forwarded-For is not believed.
    expect(addressOf(direct)).toMatch(/^[0-9.:a-f]+$/);
    expect(addressOf(direct)).not.toBe('198.51.100.77');
  });

  it('one replica killed while a client pages on through the proxy: no failed page, no row lost or repeated', async () => {
    const path = '/v1/service-requests?limit=1000&borough=brooklyn';
    const count = (await (await get(url.proxy, '/v1/service-requests/count?borough=brooklyn')).json() as { count: number }).count;
    const ids: number[] = [];
    const failures: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response = await get(url.proxy, cursor === null ? path : `${path}&cursor=${encodeURIComponent(cursor)}`);
      if (response.status !== 200) {
        failures.push(`page ${pages + 1}: ${response.status} ${await response.text()}`);
        break;
      }
      const page = await response.json() as Page;
      ids.push(...page.items.map((item) => item.id));
      cursor = page.next_cursor;
      pages += 1;
      if (pages === 3) await podman('kill', container('requests-a'));
    } while (cursor !== null);
    expect(failures).toEqual([]);
    expect(pages).toBeGreaterThan(5);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(count);
  });
});
