import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';
import { IMAGE, podman, podmanStatus, publishedUrl, removeContainers, waitFor200 } from './podman.js';

/** The image run alone (Containerfile; docs/deploy.md). */
const KEY = 'container-test-key';
const HOUSE = {
  bedrooms: 3, bathrooms: 2.25, floors: 2, sqft_living: 2170, sqft_basement: 400, sqft_lot: 7242, waterfront: false, view: 0,
  condition: 3, grade: 7, yr_built: 1951, yr_renovated: 1991, lat: 47.721, long: -122.319, sqft_living15: 1690, sqft_lot15: 7639,
};
const suffix = `${process.pid}`;
const containers: string[] = [];

/** Starts the image (read-only root, no tmpfs either: nothing at all is writable). */
async function start(name: string, env: Record<string, string>, extra: string[] = []): Promise<string> {
  const fullName = `city-services-test-${name}-${suffix}`;
  containers.push(fullName);
  const envArgs = Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
  await podman('run', '--detach', '--name', fullName, '--read-only', '--read-only-tmpfs=false',
    '--publish', '127.0.0.1::8001', '--publish', '127.0.0.1::8002', '--publish', '127.0.0.1::8003', ...envArgs, ...extra, IMAGE);
  return fullName;
}

afterAll(() => removeContainers(...containers));

describe('the image, all three services in one container', () => {
  let name = '';
  const url: Record<'tickets' | 'houses' | 'requests', string> = { tickets: '', houses: '', requests: '' };

  beforeAll(async () => {
    name = await start('all', { API_KEY: KEY });
    url.tickets = await publishedUrl(name, 8001);
    url.houses = await publishedUrl(name, 8002);
    url.requests = await publishedUrl(name, 8003);
    await Promise.all(Object.values(url).map((base) => waitFor200(`${base}/health`)));
  });

  it('answers /health and one request per service', async () => {
    for (const base of Object.values(url)) expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: 'ok' });
    const headers = { 'content-type': 'application/json', 'x-api-key': KEY };
    const classified = await fetch(`${url.tickets}/v1/classify`, { method: 'POST', headers, body: JSON.stringify({ subject: 'My parcel is lost' }) });
    expect(classified.status).toBe(200);
    expect(await classified.json()).toMatchObject({ category: 'shipping' });
    const estimate = await fetch(`${url.houses}/v1/estimates`, { method: 'POST', headers, body: JSON.stringify(HOUSE) });
    expect(estimate.status).toBe(200);
    expect((await estimate.json() as { estimate_usd: number }).estimate_usd).toBeGreaterThan(0);
    const page = await fetch(`${url.requests}/v1/service-requests?limit=2&borough=queens`, { headers });
    expect(page.status).toBe(200);
    expect((await page.json() as { items: unknown[] }).items).toHaveLength(2);
  });

  it('runs as a non-root user', async () => {
    expect(await podman('exec', name, 'id', '-u')).toBe('1000');
    expect(await podman('image', 'inspect', IMAGE, '--format', '{{.Config.User}}')).toBe('node');
  });

  it('works on a read-only root file system (nothing writable at all)', async () => {
    expect(await podman('inspect', name, '--format', '{{.HostConfig.ReadonlyRootfs}}')).toBe('true');
    expect(await podmanStatus('exec', name, 'sh', '-c', 'echo x > /app/written || echo x > /tmp/written')).not.toBe(0);
  });

  it('HEALTHCHECK: /health of every service it runs', async () => {
    expect(await podman('image', 'inspect', IMAGE, '--format', '{{json .Config.Healthcheck.Test}}')).toBe('["CMD","node","deploy/healthcheck.mjs"]');
    expect(await podmanStatus('healthcheck', 'run', name)).toBe(0);
  });
});

describe('the model check at start', () => {
  const folder = mkdtempSync(join(tmpdir(), 'container-model-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('refuses a tampered model file: 503 model_unavailable, the SHA-256 mismatch in the log', async () => {
    const original = readFileSync(join(REPO_ROOT, 'models/kc-hgb-drift-2015-02.json'));
    const tampered = Buffer.from(original.toString('utf8').replace(/"learning_rate":\s*[0-9.]+/, '"learning_rate": 0.5'));
    expect(tampered.equals(original)).toBe(false);
    const path = join(folder, 'kc-hgb-drift-2015-02.json');
    writeFileSync(path, tampered);
    const name = await start('tampered', { SERVICE: 'houses' }, ['--volume', `${path}:/app/models/kc-hgb-drift-2015-02.json:ro,Z`]);
    const base = await publishedUrl(name, 8002);
    await waitFor200(`${base}/health`);
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(503);
    expect((await ready.json() as { error: { code: string } }).error.code).toBe('model_unavailable');
    const logs = await podman('logs', name);
    expect(logs).toContain('hash_mismatch');
    expect(logs).toContain(createHash('sha256').update(tampered).digest('hex'));
  });
});

describe('SIGTERM', () => {
  it('finishes the request in flight (a whole export), then exits 0', async () => {
    const name = await start('sigterm', { SERVICE: 'requests', API_KEY: KEY });
    const base = await publishedUrl(name, 8003);
    await waitFor200(`${base}/health`);
    const count = (await (await fetch(`${base}/v1/service-requests/count`, { headers: { 'x-api-key': KEY } })).json() as { count: number }).count;
    const body = await new Promise<string>((resolve, reject) => {
      http.get(`${base}/v1/exports/service-requests?format=csv`, { headers: { 'x-api-key': KEY } }, (response) => {
        expect(response.statusCode).toBe(200);
        const chunks: Buffer[] = [];
        response.once('data', (chunk: Buffer) => {
          chunks.push(chunk);
          // Paused while the service gets SIGTERM: the answer is well in flight, not finished.
          response.pause();
          podman('kill', '--signal', 'TERM', name).then(() => setTimeout(() => {
            response.on('data', (more: Buffer) => chunks.push(more));
            response.resume();
          }, 500), reject);
        });
        response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        response.on('error', reject);
      }).on('error', reject);
    });
    expect(body.endsWith('\n')).toBe(true);
    expect(body.trimEnd().split('\n')).toHaveLength(count + 1);
    expect(await podman('wait', name)).toBe('0');
  });
});
