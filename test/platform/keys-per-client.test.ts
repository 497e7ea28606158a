import { unlinkSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { KEY_FILE_CHECK_MS } from '../../src/platform/api-keys/key-file-watch.js';
import { LogCapture, expectError, type AnyResponse } from '../support/http.js';
import { createKey, editKey, keyFilePath, keysCommand, within } from '../support/key-files.js';
import { SERVICES, type ServiceUnderTest } from '../reliability/services.js';

/**
 * Keys per client (docs/deploy.md, "Keys per client"), on each service: keys made by `npm run keys`
 * in API_KEYS_FILE beside the anonymous API_KEY; a revoke reaching two running replicas without a
 * restart; every refused key answered the same 401; limits per key; the key in no log line, metric or
 * error; a broken file keeping the last good keys.
 */
const ANONYMOUS_KEY = 'anonymous-key-of-the-test-0123';
const METRICS_KEY = 'keys-metrics-key-0123456789';

interface Built {
  app: PlatformApp;
  logs: LogCapture;
  cleanup: () => Promise<void>;
}

let toClose: Built[] = [];
afterEach(async () => {
  for (const built of toClose) {
    await built.app.close();
    await built.cleanup();
  }
  toClose = [];
});

const keyFile = keyFilePath;

async function build(service: ServiceUnderTest, path: string, env: Record<string, string> = {}): Promise<Built> {
  const logs = new LogCapture();
  const { app, cleanup } = await service.build(ANONYMOUS_KEY, logs, { env: { API_KEYS_FILE: path, ...env } });
  await app.ready();
  const built = { app, logs, cleanup };
  toClose.push(built);
  return built;
}

function call(app: PlatformApp, service: ServiceUnderTest, key?: string, address = '127.0.0.1'): Promise<AnyResponse> {
  const { method, url, payload } = service.protectedRequest;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== undefined) headers['x-api-key'] = key;
  return app.inject({ method, url, headers, remoteAddress: address, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
}

/** The one 401 of the contract, whatever the reason: the same body but for its request id. */
function expectUnauthorized(response: AnyResponse): void {
  expectError(response, 401, 'unauthorized', [], 'Missing or invalid API key');
  expect(Object.keys(response.headers).filter((name) => name.startsWith('www-'))).toEqual([]);
}

/** The request log lines (msg "request") of the logs, in order. */
const requestLines = (logs: LogCapture) => logs.lines().filter((line) => line.msg === 'request');

/** A made key with one character changed: its checksum fails. */
const mistyped = (key: string) => `${key.slice(0, 12)}${key[12] === 'Q' ? 'R' : 'Q'}${key.slice(13)}`;

describe.each(SERVICES.map((service) => [service.name, service] as const))('%s: keys per client', (name, service) => {
  const test = it.skipIf(!service.available);

  test('a key made by npm run keys opens the service, beside API_KEY; the log line names its id, never the key', async () => {
    const path = keyFile();
    const { key, id } = await createKey(path, '--name', 'Dashboard', '--services', name);
    const { app, logs } = await build(service, path);
    expect((await call(app, service, key)).statusCode).toBe(200);
    expect((await call(app, service, ANONYMOUS_KEY)).statusCode).toBe(200);
    const lines = requestLines(logs);
    expect(lines.map((line) => line.key_id)).toEqual([id, 'anonymous']);
    expect(logs.text()).not.toContain(key);
    expect(logs.text()).not.toContain(ANONYMOUS_KEY);
  });

  test('unknown, mistyped, expired, revoked, for another service, or no key: the same 401; the reason in the log, with the id where known', async () => {
    const path = keyFile();
    const other = name === 'tickets' ? 'houses' : 'tickets';
    const expired = await createKey(path, '--name', 'Expired');
    const revoked = await createKey(path, '--name', 'Revoked');
    const elsewhere = await createKey(path, '--name', 'Elsewhere', '--services', other);
    const good = await createKey(path, '--name', 'Good');
    await editKey(path, expired.id, (entry) => (entry.expires_at = new Date(Date.now() - 1_000).toISOString()));
    await keysCommand(path, 'revoke', revoked.id);
    const unknown = await createKey(keyFile(), '--name', 'In another file');
    const { app, logs } = await build(service, path);
    const cases: [key: string | undefined, reason: string, id: string | undefined][] = [
      [unknown.key, 'unknown', undefined],
      [mistyped(good.key), 'mistyped', undefined],
      [expired.key, 'expired', expired.id],
      [revoked.key, 'revoked', revoked.id],
      [elsewhere.key, 'not_for_service', elsewhere.id],
      [undefined, 'missing', undefined],
      ['', 'missing', undefined],
    ];
    const bodies: unknown[] = [];
    for (const [key] of cases) {
      const response = await call(app, service, key);
      expectUnauthorized(response);
      const body = JSON.parse(response.body) as { error: Record<string, unknown> };
      bodies.push({ ...body.error, request_id: undefined });
    }
    expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1);
    const lines = requestLines(logs);
    expect(lines.map((line) => [line.key_refused, line.key_id])).toEqual(cases.map(([, reason, id]) => [reason, id]));
    for (const [key] of cases) if (key) expect(logs.text()).not.toContain(key);
    expect((await call(app, service, good.key)).statusCode).toBe(200);
  });

  test('revoke reaches two running replicas within 2 s, with no restart', async () => {
    const path = keyFile();
    const { key, id } = await createKey(path, '--name', 'Soon revoked');
    const [one, two] = [await build(service, path), await build(service, path)];
    expect((await call(one.app, service, key)).statusCode).toBe(200);
    expect((await call(two.app, service, key)).statusCode).toBe(200);
    expect((await keysCommand(path, 'revoke', id)).code).toBe(0);
    const took = await within(2_000, async () => (await call(one.app, service, key)).statusCode === 401 && (await call(two.app, service, key)).statusCode === 401);
    expect(took).toBeLessThan(2_000);
    expectUnauthorized(await call(one.app, service, key));
    expectUnauthorized(await call(two.app, service, key));
    // The others' keys are untouched.
    expect((await call(one.app, service, ANONYMOUS_KEY)).statusCode).toBe(200);
    // A key added to the file works on both as soon.
    const added = await createKey(path, '--name', 'Added');
    await within(2_000, async () => (await call(one.app, service, added.key)).statusCode === 200 && (await call(two.app, service, added.key)).statusCode === 200);
  });

  test('limits per key: each key its own counter and its own limit (RateLimit-Limit), API_KEY at RATE_LIMIT', async () => {
    const path = keyFile();
    const small = await createKey(path, '--name', 'Small', '--rate', '2/minute');
    const large = await createKey(path, '--name', 'Large', '--rate', '3/minute');
    const plain = await createKey(path, '--name', 'Plain');
    const { app } = await build(service, path, { RATE_LIMIT: '4/minute' });
    const statuses = async (key: string, count: number) => {
      const answers = [];
      for (let i = 0; i < count; i++) answers.push(await call(app, service, key));
      return answers;
    };
    const smallAnswers = await statuses(small.key, 3);
    expect(smallAnswers.map((answer) => answer.statusCode)).toEqual([200, 200, 429]);
    expect(smallAnswers[0]!.headers['ratelimit-limit']).toBe('2');
    expectError(smallAnswers[2]!, 429, 'rate_limited', []);
    // The other keys are not touched by the first one's flood, from the same address.
    const largeAnswers = await statuses(large.key, 4);
    expect(largeAnswers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 429]);
    expect(largeAnswers[0]!.headers['ratelimit-limit']).toBe('3');
    expect((await statuses(plain.key, 5)).map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 429]);
    const anonymous = await call(app, service, ANONYMOUS_KEY);
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.headers['ratelimit-limit']).toBe('4');
  });

  test('a key limit of its own applies without RATE_LIMIT; the other keys are not limited', async () => {
    const path = keyFile();
    const limited = await createKey(path, '--name', 'Limited', '--rate', '1/minute');
    const free = await createKey(path, '--name', 'Free');
    const { app } = await build(service, path);
    expect((await call(app, service, limited.key)).headers['ratelimit-limit']).toBe('1');
    expect((await call(app, service, limited.key)).statusCode).toBe(429);
    const answer = await call(app, service, free.key);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['ratelimit-limit']).toBeUndefined();
  });

  test('the key never in a log line, a metric or an error; /metrics counts requests and refusals per key id', async () => {
    const path = keyFile();
    const good = await createKey(path, '--name', 'Counted', '--rate', '2/minute');
    const revoked = await createKey(path, '--name', 'Revoked');
    await keysCommand(path, 'revoke', revoked.id);
    const { app, logs } = await build(service, path, { METRICS_KEY });
    // The third request of the key allowed 2/minute is refused only in the window of the first two
    // (fixed windows, aligned on the minute): a run that could cross into the next minute waits for it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
    const bodies: string[] = [];
    for (const key of [good.key, good.key, good.key, revoked.key, mistyped(good.key), 'not-a-key-of-anyone-0123', ANONYMOUS_KEY, undefined]) {
      const response = await call(app, service, key);
      bodies.push(response.body, JSON.stringify(response.headers));
    }
    const metrics = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_KEY}` } });
    expect(metrics.statusCode).toBe(200);
    const text = metrics.body;
    expect(text).toContain(`api_key_requests_total{key_id="${good.id}",service="${name}"} 3`);
    expect(text).toContain(`api_key_refusals_total{key_id="${good.id}",reason="rate_limited",service="${name}"} 1`);
    expect(text).toContain(`api_key_refusals_total{key_id="${revoked.id}",reason="revoked",service="${name}"} 1`);
    expect(text).toContain(`api_key_refusals_total{key_id="refused",reason="mistyped",service="${name}"} 1`);
    expect(text).toContain(`api_key_refusals_total{key_id="refused",reason="unknown",service="${name}"} 1`);
    expect(text).toContain(`api_key_refusals_total{key_id="refused",reason="missing",service="${name}"} 1`);
    expect(text).toContain(`api_key_requests_total{key_id="anonymous",service="${name}"} 1`);
    expect(text).toContain(`api_key_requests_total{key_id="refused",service="${name}"} 3`);
    // Bounded: the ids of the file, anonymous and refused only.
    const ids = new Set([...text.matchAll(/key_id="([^"]*)"/g)].map((match) => match[1]));
    expect([...ids].sort()).toEqual([good.id, revoked.id, 'anonymous', 'refused'].sort());
    for (const secret of [good.key, revoked.key, mistyped(good.key), 'not-a-key-of-anyone-0123', ANONYMOUS_KEY]) {
      expect(text).not.toContain(secret);
      expect(logs.text()).not.toContain(secret);
      for (const body of bodies) expect(body).not.toContain(secret);
    }
  });

  test('a broken file keeps the last good keys and logs one error; repaired, it is read again', async () => {
    const path = keyFile();
    const { key } = await createKey(path, '--name', 'Kept');
    const { app, logs } = await build(service, path);
    const errors = () => logs.lines().filter((line) => line.level === 50);
    writeFileSync(path, '{"version": 1, "keys": [');
    await within(2_000, () => errors().length > 0);
    // Several checks of the file later: still one error, the key still works.
    await new Promise((resolve) => setTimeout(resolve, 3 * KEY_FILE_CHECK_MS));
    expect(errors()).toHaveLength(1);
    expect(errors()[0]).toMatchObject({ msg: 'API_KEYS_FILE cannot be used: the last good keys stay in force', reason: expect.stringMatching(/^not JSON/) });
    expect((await call(app, service, key)).statusCode).toBe(200);
    // Gone altogether: the same.
    unlinkSync(path);
    await within(2_000, () => errors().length > 1);
    expect(errors()[1]).toMatchObject({ reason: 'cannot be read (ENOENT)' });
    expect((await call(app, service, key)).statusCode).toBe(200);
    // A new good file replaces the keys.
    const replaced = await createKey(path, '--name', 'New');
    await within(2_000, async () => (await call(app, service, replaced.key)).statusCode === 200);
    expectUnauthorized(await call(app, service, key));
    expect(errors()).toHaveLength(2);
    expect(logs.text()).not.toContain(key);
  });
});

describe('SIGHUP', () => {
  it('reads the key file again at once, whatever its state', async () => {
    const [service] = SERVICES;
    const path = keyFile();
    await createKey(path, '--name', 'First');
    const { logs } = await build(service!, path);
    await createKey(path, '--name', 'Second');
    process.emit('SIGHUP', 'SIGHUP');
    await within(1_000, () => logs.lines().some((line) => line.cause === 'SIGHUP' && line.keys === 2));
  });
});

describe('API_KEYS_FILE alone (no API_KEY)', () => {
  it('tickets and houses check keys (no warning that none is enforced); requests makes no random key', async () => {
    const { readTicketSettings } = await import('../../src/services/tickets/settings.js');
    const { buildTicketsApp } = await import('../../src/services/tickets/app.js');
    const { readRequestSettings } = await import('../../src/services/requests/settings.js');
    const path = keyFile();
    const { key } = await createKey(path, '--name', 'Only');
    const logs = new LogCapture();
    const app = await buildTicketsApp(readTicketSettings({ API_KEYS_FILE: path, RATE_LIMIT: '100/minute' }), { logStream: logs });
    toClose.push({ app, logs, cleanup: async () => {} });
    const classify = (headers: Record<string, string>) =>
      app.inject({ method: 'POST', url: '/v1/classify', headers: { 'content-type': 'application/json', ...headers }, payload: '{"subject":"refund"}' });
    expectUnauthorized(await classify({}));
    expect((await classify({ 'x-api-key': key })).statusCode).toBe(200);
    expect(logs.text()).not.toContain('API_KEY is not set');
    // A route open to all (the categories) logs the key when one is accepted, and no refusal without.
    await app.inject({ method: 'GET', url: '/v1/categories' });
    await app.inject({ method: 'GET', url: '/v1/categories', headers: { 'x-api-key': 'not-a-key-of-anyone-0123' } });
    await app.inject({ method: 'GET', url: '/v1/categories', headers: { 'x-api-key': key } });
    const categories = requestLines(logs).filter((line) => line.path === '/v1/categories');
    expect(categories.map((line) => [line.key_id, line.key_refused])).toEqual([[undefined, undefined], [undefined, undefined], [expect.stringMatching(/^key_/), undefined]]);
    const requests = readRequestSettings({ API_KEYS_FILE: path });
    expect(requests.generatedApiKey).toBeNull();
    expect(requests.apiKeys).toEqual([]);
  });
});
