import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseKeyFile, readKeyFile } from '../../src/platform/api-keys/key-file.js';
import { ApiKeySet } from '../../src/platform/api-keys/key-set.js';
import { checksumFails, hasKeyForm, keyDigest, newKeyText } from '../../src/platform/api-keys/key-text.js';
import { readApiKeysFile, readPlatformSettings } from '../../src/platform/settings.js';
import { createKey, keyFilePath, keysCommand } from '../support/key-files.js';

/**
 * The key file and its command (docs/deploy.md, "Keys per client"): the keys' form and checksum, the
 * file's checks, `npm run keys -- create | list | revoke | rotate`, and who a presented key is.
 */
const keyFile = keyFilePath;

const HASH = 'a'.repeat(64);
const entry = (changes: Record<string, unknown> = {}) => ({ id: 'key_1', name: 'Newsroom', sha256: HASH, services: ['requests'], ...changes });
const fileText = (keys: unknown[]) => JSON.stringify({ version: 1, keys });

describe('the key text: cs_, 30 random base62 characters, a 6-character checksum', () => {
  it('made keys have the form, 178 random bits, and differ every time', () => {
    const keys = Array.from({ length: 200 }, () => newKeyText());
    for (const key of keys) {
      expect(key).toMatch(/^cs_[0-9A-Za-z]{36}$/);
      expect(hasKeyForm(key)).toBe(true);
      expect(checksumFails(key)).toBe(false);
    }
    expect(new Set(keys).size).toBe(keys.length);
    // 30 characters of 62: log2(62^30) = 178.6 bits, over the 128 asked.
    expect(30 * Math.log2(62)).toBeGreaterThan(128);
  });

  it('a key with any one character changed (a typo) fails its checksum: refused without a lookup', () => {
    const key = newKeyText();
    for (let at = 3; at < key.length; at++) {
      const typo = key.slice(0, at) + (key[at] === 'x' ? 'y' : 'x') + key.slice(at + 1);
      expect(checksumFails(typo), typo).toBe(true);
    }
    // Two neighbours swapped, too.
    const swapped = `${key.slice(0, 5)}${key.charAt(6)}${key.charAt(5)}${key.slice(7)}`;
    if (swapped !== key) expect(checksumFails(swapped)).toBe(true);
  });

  it('keys of another form (those of API_KEY) have no checksum to fail', () => {
    for (const key of ['a-key-of-api-key-0123', 'cs_short', `cs_${'0'.repeat(37)}`]) expect(checksumFails(key)).toBe(false);
  });
});

describe('the key file: JSON checked against its schema, one line saying where and why', () => {
  it('a file of the form is read: rates and expiry dates understood', () => {
    const file = parseKeyFile(fileText([entry({ rate_limit: '10 / Minute', expires_at: '2030-01-02', disabled: false }), entry({ id: 'key_2', sha256: 'b'.repeat(64) })]));
    expect(file.records[0]).toEqual({ id: 'key_1', name: 'Newsroom', sha256: HASH, services: ['requests'], rate: { max: 10, windowMs: 60_000, text: '10/minute' }, expiresAtMs: Date.UTC(2030, 0, 2), disabled: false });
    expect(file.records[1]).toMatchObject({ rate: null, expiresAtMs: null, disabled: false });
  });

  const BROKEN: [what: string, text: string, message: RegExp][] = [
    ['not JSON', '{"version": 1, "keys": [', /^not JSON/],
    ['another version', JSON.stringify({ version: 2, keys: [] }), /^version: expected the number 1$/],
    ['no keys', JSON.stringify({ version: 1 }), /^keys: missing$/],
    ['an unknown field', fileText([entry({ key: 'cs_...' })]), /^keys\[0\]: unknown field "key"$/],
    ['a missing hash', fileText([{ id: 'key_1', name: 'x', services: ['tickets'] }]), /^keys\[0\]\.sha256: missing$/],
    ['a hash that is no SHA-256', fileText([entry({ sha256: 'cs_abc' })]), /^keys\[0\]\.sha256: expected the SHA-256/],
    ['an unknown service', fileText([entry({ services: ['request'] })]), /^keys\[0\]\.services\[0\]: expected a list of one or more of tickets, houses, requests/],
    ['no service', fileText([entry({ services: [] })]), /^keys\[0\]\.services: expected/],
    ['a service twice', fileText([entry({ services: ['houses', 'houses'] })]), /^keys\[0\]\.services: expected/],
    ['a limit that is no limit', fileText([entry({ rate_limit: '10/fortnight' })]), /^keys\[0\]\.rate_limit: "10\/fortnight" is not a limit of the form/],
    ['an expiry that is no date', fileText([entry({ expires_at: 'tomorrow' })]), /^keys\[0\]\.expires_at: expected null, a date/],
    ['an expiry on no real day', fileText([entry({ expires_at: '2030-02-30' })]), /^keys\[0\]\.expires_at: "2030-02-30" is not a real date$/],
    ['disabled not a boolean', fileText([entry({ disabled: 'yes' })]), /^keys\[0\]\.disabled: expected true or false$/],
    ['an id given twice', fileText([entry(), entry({ sha256: 'b'.repeat(64) })]), /^keys\[1\]\.id: "key_1" is already the id of keys\[0\]$/],
    ['a key given twice', fileText([entry(), entry({ id: 'key_2' })]), /^keys\[1\]\.sha256: the same key as keys\[0\]$/],
    ['a reserved id', fileText([entry({ id: 'anonymous' })]), /^keys\[0\]\.id: "anonymous" is reserved/],
    ['a name with a control character', fileText([entry({ name: 'a\u001b[31mb' })]), /^keys\[0\]\.name: expected a name/],
  ];
  it.each(BROKEN)('%s: refused', (_what, text, message) => {
    expect(() => parseKeyFile(text)).toThrow(message);
  });

  it('at start, an unusable file stops the start (Invalid setting API_KEYS_FILE: ...), one line', () => {
    const path = keyFile();
    expect(() => readPlatformSettings({ API_KEYS_FILE: path }, 1)).toThrow(`Invalid setting API_KEYS_FILE: ${JSON.stringify(path)}: cannot be read (ENOENT)`);
    writeFileSync(path, fileText([entry({ rate_limit: 'lots' })]));
    expect(() => readPlatformSettings({ API_KEYS_FILE: path }, 1)).toThrow(/^Invalid setting API_KEYS_FILE: ".*": keys\[0\]\.rate_limit: "lots" is not a limit/);
    writeFileSync(path, '\n'.repeat(3) + '{');
    let message = '';
    try {
      readApiKeysFile({ API_KEYS_FILE: path });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^Invalid setting API_KEYS_FILE: ".*": not JSON/);
    expect(message).not.toMatch(/[\r\n]/);
    writeFileSync(path, fileText([entry()]));
    expect(readApiKeysFile({ API_KEYS_FILE: path })?.initial.records).toHaveLength(1);
  });
});

describe('npm run keys', () => {
  it('create: the key printed once on stdout, alone; the file holds its SHA-256, never the key', async () => {
    const path = keyFile();
    const run = await keysCommand(path, 'create', '--name', 'Newsroom dashboard', '--services', 'requests,houses', '--rate', '600/minute', '--expires', '2099-12-31');
    expect(run.code).toBe(0);
    const key = run.stdout.trim();
    expect(run.stdout).toBe(`${key}\n`);
    expect(hasKeyForm(key)).toBe(true);
    expect(run.stderr).toMatch(/^Created key_[0-9a-f]{12} \("Newsroom dashboard"\) for requests, houses; limit 600\/minute; refused from 2099-12-31T00:00:00.000Z\./);
    expect(run.stderr).not.toContain(key);
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(3, 20));
    const { content } = await readKeyFile(path);
    expect(content.keys).toEqual([
      {
        id: expect.stringMatching(/^key_[0-9a-f]{12}$/),
        name: 'Newsroom dashboard',
        sha256: keyDigest(key),
        services: ['requests', 'houses'],
        rate_limit: '600/minute',
        expires_at: '2099-12-31T00:00:00.000Z',
        disabled: false,
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      },
    ]);
    // Defaults: every service, no limit of its own, no expiry. A new file is readable by the services' user.
    const second = await createKey(path, '--name', 'Second');
    expect((await readKeyFile(path)).content.keys[1]).toMatchObject({ id: second.id, services: ['tickets', 'houses', 'requests'], rate_limit: null, expires_at: null });
    expect(statSync(path).mode & 0o777).toBe(0o644);
  });

  it('list: id, name, services, limit, expiry and state of each key, never a key nor its hash', async () => {
    const path = keyFile();
    const one = await createKey(path, '--name', 'One', '--rate', '5/second');
    const two = await createKey(path, '--name', 'Two', '--services', 'tickets');
    await keysCommand(path, 'revoke', two.id);
    const run = await keysCommand(path, 'list');
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+name\s+services\s+limit\s+expires\s+state\s+created$/);
    expect(lines[1]).toMatch(new RegExp(`^${one.id}\\s+One\\s+tickets,houses,requests\\s+5/second\\s+-\\s+active\\s+\\d{4}-`));
    expect(lines[2]).toMatch(new RegExp(`^${two.id}\\s+Two\\s+tickets\\s+-\\s+-\\s+revoked\\s+`));
    for (const secret of [one.key, two.key, keyDigest(one.key), keyDigest(two.key)]) expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it('revoke ID: the entry disabled (kept, so that its refusals are logged with its id)', async () => {
    const path = keyFile();
    const { id } = await createKey(path, '--name', 'Gone');
    const run = await keysCommand(path, 'revoke', id);
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toContain(`Revoked ${id}`);
    expect((await readKeyFile(path)).content.keys[0]).toMatchObject({ id, disabled: true });
    expect((await keysCommand(path, 'revoke', id)).stderr).toContain('already revoked');
  });

  it('rotate ID: a new key beside the old, same name, services and limit; the old one with an expiry (24 h, or --old-expires)', async () => {
    const path = keyFile();
    const old = await createKey(path, '--name', 'Dashboards', '--services', 'requests', '--rate', '100/hour');
    const started = Date.now();
    const run = await keysCommand(path, 'rotate', old.id);
    expect(run.code).toBe(0);
    const newKey = run.stdout.trim();
    expect(hasKeyForm(newKey)).toBe(true);
    expect(newKey).not.toBe(old.key);
    const [oldEntry, newEntry] = (await readKeyFile(path)).content.keys;
    expect(newEntry).toMatchObject({ name: 'Dashboards', services: ['requests'], rate_limit: '100/hour', expires_at: null, disabled: false, rotated_from: old.id, sha256: keyDigest(newKey) });
    const oldExpiry = Date.parse(oldEntry!.expires_at!);
    expect(oldExpiry - started).toBeGreaterThanOrEqual(24 * 3_600_000 - 1_000);
    expect(oldExpiry - started).toBeLessThanOrEqual(24 * 3_600_000 + 60_000);
    expect(run.stderr).toContain(`which replaces ${old.id}`);
    // --old-expires now: the old key is refused from its next request.
    await keysCommand(path, 'rotate', newEntry!.id, '--old-expires', 'now');
    const rotatedAgain = (await readKeyFile(path)).content.keys[1]!;
    expect(Date.parse(rotatedAgain.expires_at!)).toBeLessThanOrEqual(Date.now());
  });

  const REFUSED: [what: string, args: string[], code: number, message: RegExp][] = [
    ['create without a name', ['create'], 2, /--name NAME/],
    ['a service that does not exist', ['create', '--name', 'x', '--services', 'tickets,request'], 2, /--services: "request" is not one of tickets, houses, requests/],
    ['a limit that is no limit', ['create', '--name', 'x', '--rate', '10/fortnight'], 2, /--rate: "10\/fortnight" is not a limit/],
    ['an expiry in the past', ['create', '--name', 'x', '--expires', '2020-01-01'], 2, /--expires: 2020-01-01 has begun or passed/],
    ['an expiry that is no date', ['create', '--name', 'x', '--expires', '2030-02-30'], 2, /--expires: "2030-02-30" is not a date/],
    ['revoke of an unknown id', ['revoke', 'key_nope'], 1, /no key has the id "key_nope"/],
    ['rotate without an id', ['rotate'], 2, /^Usage/],
    ['an unknown command', ['delete', 'key_1'], 2, /^Usage/],
    ['an unknown option', ['list', '--verbose'], 2, /^keys: Unknown option/],
  ];
  it.each(REFUSED)('%s: refused, the file unchanged', async (_what, args, code, message) => {
    const path = keyFile();
    await createKey(path, '--name', 'Existing');
    const before = readFileSync(path, 'utf8');
    const run = await keysCommand(path, ...args);
    expect(run.code).toBe(code);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('rotate of a revoked key is refused (make a new one)', async () => {
    const path = keyFile();
    const { id } = await createKey(path, '--name', 'Revoked');
    await keysCommand(path, 'revoke', id);
    expect(await keysCommand(path, 'rotate', id)).toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('is revoked') });
  });

  it('no file named (--file nor API_KEYS_FILE): refused; a broken file is never overwritten', async () => {
    let stderr = '';
    const { runKeysCommand } = await import('../../src/platform/api-keys/keys-command.js');
    expect(await runKeysCommand(['list'], { stdout: () => undefined, stderr: (text) => (stderr += text), env: {} })).toBe(2);
    expect(stderr).toMatch(/no key file: give --file PATH or set API_KEYS_FILE/);
    const path = keyFile();
    writeFileSync(path, '{"version": 1, "keys": [');
    const run = await keysCommand(path, 'create', '--name', 'x');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/not JSON/);
    expect(readFileSync(path, 'utf8')).toBe('{"version": 1, "keys": [');
  });

  it('two commands at once: both changes kept (the lock)', async () => {
    const path = keyFile();
    await Promise.all(Array.from({ length: 6 }, (_, n) => createKey(path, '--name', `Client ${n}`)));
    expect((await readKeyFile(path)).content.keys).toHaveLength(6);
  });
});

describe('who presents a key (ApiKeySet): one hash and one lookup', () => {
  const now = Date.UTC(2030, 0, 1);
  const record = (id: string, key: string, changes: Partial<ReturnType<typeof parseKeyFile>['records'][number]> = {}) => ({
    id, name: id, sha256: keyDigest(key), services: ['tickets'], rate: null, expiresAtMs: null, disabled: false, ...changes,
  });
  const good = newKeyText();
  const revoked = newKeyText();
  const expired = newKeyText();
  const elsewhere = newKeyText();
  const set = new ApiKeySet('tickets', ['anonymous-key-0123456'], [
    record('key_good', good, { rate: { max: 5, windowMs: 1_000, text: '5/second' } }),
    record('key_revoked', revoked, { disabled: true }),
    record('key_expired', expired, { expiresAtMs: now }),
    record('key_elsewhere', elsewhere, { services: ['houses'] }),
  ]);

  it.each([
    ['a key of the file', good, { kind: 'accepted', id: 'key_good', counter: 'id:key_good', rate: { max: 5, windowMs: 1_000, text: '5/second' } }],
    ['a key of API_KEY', 'anonymous-key-0123456', { kind: 'accepted', id: 'anonymous', counter: expect.stringMatching(/^key:[A-Za-z0-9_-]{43}$/), rate: null }],
    ['no key', undefined, { kind: 'refused', reason: 'missing', id: null }],
    ['an empty key', '', { kind: 'refused', reason: 'missing', id: null }],
    ['a key given twice (an array)', [good, good], { kind: 'refused', reason: 'missing', id: null }],
    ['a made key mistyped', `${good.slice(0, 10)}${good[10] === 'a' ? 'b' : 'a'}${good.slice(11)}`, { kind: 'refused', reason: 'mistyped', id: null }],
    ['a key nobody has', newKeyText(), { kind: 'refused', reason: 'unknown', id: null }],
    ['a revoked key', revoked, { kind: 'refused', reason: 'revoked', id: 'key_revoked' }],
    ['a key whose expiry has come', expired, { kind: 'refused', reason: 'expired', id: 'key_expired' }],
    ['a key of another service', elsewhere, { kind: 'refused', reason: 'not_for_service', id: 'key_elsewhere' }],
  ])('%s', (_what, presented, identity) => {
    expect(set.identify(presented, now)).toEqual(identity);
  });

  it('a key works until its expiry, and is refused from that instant on', () => {
    expect(set.identify(expired, now - 1)).toMatchObject({ kind: 'accepted', id: 'key_expired' });
    expect(set.identify(expired, now)).toMatchObject({ kind: 'refused', reason: 'expired' });
  });

  it('no key configured: open; an empty key file: every key refused (fail closed)', () => {
    expect(new ApiKeySet('tickets', [], null).identify(undefined)).toEqual({ kind: 'open' });
    expect(new ApiKeySet('tickets', [], []).identify(good)).toMatchObject({ kind: 'refused', reason: 'unknown' });
  });
});
