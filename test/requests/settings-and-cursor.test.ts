import { createHmac, hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SettingsError } from '../../src/platform/setting-readers.js';
import {
  CURSOR_MAX_LENGTH,
  CURSOR_NO_LONGER_ACCEPTED,
  CURSOR_NOT_VALID,
  CURSOR_OTHER_FILTERS,
  CURSOR_OTHER_SNAPSHOT,
  CursorCodec,
  FILTER_SET_ID,
  filtersHash,
} from '../../src/services/requests/cursor.js';
import { EQUALITY_FILTERS, FILTER_NAMES, NO_FILTERS, negationOf, normalizeTimeBound, type ListFilters, type NegatedFilter } from '../../src/services/requests/list-filters.js';
import { defaultSnapshotPath } from '../../src/ingest/nyc311/index.js';
import { CURSOR_SECRET_MIN_LENGTH, readRequestSettings } from '../../src/services/requests/settings.js';
import { rowColumnsMemoryBytes } from '../../src/services/requests/engine/row-columns-memory.js';
import { CODED_COLUMNS } from '../../src/snapshot/row-columns.js';
import { REPO_ROOT, expectError } from '../support/http.js';
import { fixtureDuringSuite } from './support/fixture-database.js';
import { json, startTestApp } from './support/requests-app.js';

const NEW_SECRET = 'new-cursor-secret-0123456789abcdef';
const OLD_SECRET = 'old-cursor-secret-0123456789abcdef';

describe('settings of the service-request API', () => {
  it('defaults: port 8003, the embedded SQLite snapshot, a random cursor key, a random API key', () => {
    const settings = readRequestSettings({});
    expect(settings.port).toBe(8003);
    expect(settings.host).toBe('127.0.0.1');
    expect(settings.database).toEqual({ kind: 'sqlite', path: `${REPO_ROOT}/data/service-requests.sqlite`, isDefault: true });
    expect(defaultSnapshotPath()).toBe(`${REPO_ROOT}/data/service-requests.sqlite`);
    expect(settings.cursorSecretGenerated).toBe(true);
    expect(settings.generatedApiKey).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(settings.apiKeys).toEqual([settings.generatedApiKey]);
    // each start makes other keys
    const again = readRequestSettings({});
    expect(again.generatedApiKey).not.toBe(settings.generatedApiKey);
    expect(settings.cursorSecrets).toHaveLength(1);
    expect(again.cursorSecrets[0]!.equals(settings.cursorSecrets[0]!)).toBe(false);
  });

  it('API_KEY, CURSOR_SECRET and DATABASE_URL as given', () => {
    const settings = readRequestSettings({
      API_KEY: 'first-key-0123456789,second-key-012345678',
      CURSOR_SECRET: 'a-shared-secret-of-the-replicas-01',
      DATABASE_URL: 'postgresql://user@db.example:5432/city?schema=snapshot_2025&sslmode=disable',
      PORT: '9000',
    });
    expect(settings.apiKeys).toEqual(['first-key-0123456789', 'second-key-012345678']);
    expect(settings.generatedApiKey).toBeNull();
    expect(settings.cursorSecrets.map(String)).toEqual(['a-shared-secret-of-the-replicas-01']);
    expect(settings.database).toEqual({ kind: 'postgres', url: 'postgresql://user@db.example:5432/city?sslmode=disable', schema: 'snapshot_2025' });
    expect(settings.port).toBe(9000);
    expect(readRequestSettings({ DATABASE_URL: 'postgres://localhost/db' }).database).toMatchObject({ schema: 'public' });
    expect(readRequestSettings({ DATABASE_URL: '/tmp/x.sqlite' }).database).toEqual({ kind: 'sqlite', path: '/tmp/x.sqlite', isDefault: false });
  });

  it('CURSOR_SECRET: several secrets separated by commas, the first signs (rotation like API keys)', () => {
    const settings = readRequestSettings({ CURSOR_SECRET: ` ${NEW_SECRET} , ${OLD_SECRET} ` });
    expect(settings.cursorSecrets.map(String)).toEqual([NEW_SECRET, OLD_SECRET]);
    expect(settings.cursorSecretGenerated).toBe(false);
  });

  const INVALID: [variable: string, value: string][] = [
    ['CURSOR_SECRET', ''],
    ['CURSOR_SECRET', '   '],
    ['CURSOR_SECRET', ','],
    ['CURSOR_SECRET', ' , '],
    ['CURSOR_SECRET', 'short'],
    ['CURSOR_SECRET', 'x'.repeat(CURSOR_SECRET_MIN_LENGTH - 1)],
    ['CURSOR_SECRET', `${NEW_SECRET},short`],
    ['CURSOR_SECRET', `${NEW_SECRET},`],
    ['CURSOR_SECRET', `${NEW_SECRET},,${OLD_SECRET}`],
    ['CURSOR_SECRET', `${NEW_SECRET},${NEW_SECRET}`],
    ['CURSOR_SECRET', `${NEW_SECRET} with spaces inside`],
    ['CURSOR_SECRET', `${NEW_SECRET}\u0007`],
    ['DATABASE_URL', ''],
    ['DATABASE_URL', ' \t '],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['DATABASE_URL', 'postgres://localhost/db?schema=bad-name'],
    ['DATABASE_URL', 'postgres://localhost/db?schema=a&schema=b'],
    ['DATABASE_URL', 'postgres://user:pa ss@[bad/db'],
    ['DATABASE_URL', '/tmp/snapshot\u0000.sqlite'],
    ['PORT', 'abc'],
    ['API_KEY', ' , '],
  ];
  it.each(INVALID)('%s=%j stops the start with one line naming it', (variable, value) => {
    expect(() => readRequestSettings({ [variable]: value })).toThrow(SettingsError);
    expect(() => readRequestSettings({ [variable]: value })).toThrow(new RegExp(`^Invalid setting ${variable}: [^\\n]+$`));
  });

  it('ROW_COLUMNS_MAX_MB: whole megabytes from 0 to 1048576, default 2048; anything else refuses the start', () => {
    expect(readRequestSettings({ API_KEY: 'settings-key-0123456' }).rowColumnsMaxBytes).toBe(2048 * 1_048_576);
    expect(readRequestSettings({ API_KEY: 'settings-key-0123456', ROW_COLUMNS_MAX_MB: '0' }).rowColumnsMaxBytes).toBe(0);
    expect(readRequestSettings({ API_KEY: 'settings-key-0123456', ROW_COLUMNS_MAX_MB: '1048576' }).rowColumnsMaxBytes).toBe(1_048_576 * 1_048_576);
    for (const value of ['', 'none', '1.5', '-1', '1048577', '512MB']) {
      expect(() => readRequestSettings({ API_KEY: 'settings-key-0123456', ROW_COLUMNS_MAX_MB: value })).toThrow(SettingsError);
    }
    expect(() => readRequestSettings({ API_KEY: 'settings-key-0123456', ROW_COLUMNS_MAX_MB: '1048577' })).toThrow(
      'Invalid setting ROW_COLUMNS_MAX_MB: "1048577" is not a whole number of megabytes from 0 to 1048576',
    );
  });

  it('ROW_COLUMNS_MAX_MB by default holds the row columns of the full history: 40 million requests, descriptors and zip codes of every agency at two bytes each', () => {
    const codeBytes = CODED_COLUMNS.length + 2;
    const fullHistory = rowColumnsMemoryBytes(40_000_000, codeBytes);
    expect(fullHistory).toBeLessThanOrEqual(readRequestSettings({ API_KEY: 'settings-key-0123456' }).rowColumnsMaxBytes);
    // The default before: the full history's row columns were not loaded, and its combinations walked the rows.
    expect(fullHistory).toBeGreaterThan(512 * 1_048_576);
  });

  it('a cursor secret or a database URL is never quoted in a settings message', () => {
    for (const env of [
      { CURSOR_SECRET: `${NEW_SECRET},${NEW_SECRET}` },
      { CURSOR_SECRET: `${NEW_SECRET},short` },
      { DATABASE_URL: 'postgres://user:hunter2-password@[bad/db' },
      { DATABASE_URL: 'mysql://user:hunter2-password@localhost/db' },
    ]) {
      expect(() => readRequestSettings(env)).toThrow(SettingsError);
      expect(() => readRequestSettings(env)).not.toThrow(/new-cursor-secret|hunter2/);
    }
  });
});

describe('time bounds and cursors', () => {
  it('normalizes dates and date-times so that one filtering has one spelling', () => {
    expect(normalizeTimeBound('2025-01-02')).toBe('2025-01-02T00:00:00');
    expect(normalizeTimeBound('2025-01-02T03:04:05')).toBe('2025-01-02T03:04:05');
    expect(normalizeTimeBound('2025-01-02T03:04:05.000')).toBe('2025-01-02T03:04:05');
    expect(normalizeTimeBound('2025-01-02T03:04:05.250')).toBe('2025-01-02T03:04:05.25');
    expect(normalizeTimeBound('2024-02-29')).toBe('2024-02-29T00:00:00');
    for (const bad of ['2025-02-29', '2025-04-31', '2025-01-02T03:04:05Z', '2025-01-02T03:04', '2025-1-2', '']) {
      expect(normalizeTimeBound(bad), bad).toBeNull();
    }
  });

  const SECRET = '0123456789abcdef0123456789abcdef';
  const SNAPSHOT = 'ffffffffffffffff'; // a snapshot id is 16 characters
  const position = { created_at: '2025-06-30T23:59:59', id: Number.MAX_SAFE_INTEGER };
  /** Every filter set, each equality filter with 50 values of 200 characters: the longest filters. */
  const longest: ListFilters = {
    ...(Object.fromEntries(EQUALITY_FILTERS.map((name, at) => [name, Array.from({ length: 50 }, (_, n) => `${at}${n}`.padEnd(200, 'x'))])) as Record<
      (typeof EQUALITY_FILTERS)[number],
      string[]
    >),
    created_from: '2025-01-01T00:00:00.123456',
    created_to: '2025-12-31T23:59:59.999999',
    bbox: { minLongitude: -179.123456789012, minLatitude: -89.123456789012, maxLongitude: 179.123456789012, maxLatitude: 89.123456789012 },
    ...(Object.fromEntries(EQUALITY_FILTERS.map((name, at) => [negationOf(name), Array.from({ length: 50 }, (_, n) => `${at}${n}`.padEnd(200, 'y'))])) as Record<
      NegatedFilter,
      string[]
    >),
    closed: true,
    closed_from: '2025-01-01T00:00:00.123456',
    closed_to: '2025-12-31T23:59:59.999999',
    days_to_close_min: 0.123456789,
    days_to_close_max: 99_999.123456789,
    near: { latitude: -89.123456789012, longitude: 179.123456789012, radiusM: 4_999.999999 },
    q: 'x'.repeat(100),
    search: null,
  };
  const codec = new CursorCodec([Buffer.from(SECRET)]);
  /** A cursor of any content, signed like the codec signs (the same secret). */
  const signed = (content: unknown[]): string => {
    const payload = Buffer.from(JSON.stringify(content)).toString('base64url');
    return `${payload}.${createHmac('sha256', SECRET).update(payload).digest('base64url')}`;
  };
  const refusal = (cursor: string, filters: ListFilters = NO_FILTERS): unknown => {
    try {
      codec.decode(cursor, filters, SNAPSHOT);
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it('a cursor stays under 200 characters for any position and the longest filters, and round-trips', () => {
    for (const filters of [NO_FILTERS, longest]) {
      const cursor = codec.encode(position, filters, SNAPSHOT);
      expect(cursor.length).toBeLessThanOrEqual(CURSOR_MAX_LENGTH);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]{1,150}\.[A-Za-z0-9_-]{43}$/);
      expect(codec.decode(cursor, filters, SNAPSHOT)).toEqual(position);
      // the payload names the filter set it was made under, before the hash of that set's values
      const content = JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()) as unknown[];
      expect(content).toEqual([2, position.created_at, position.id, FILTER_SET_ID, filtersHash(filters), SNAPSHOT]);
      expect(cursor).toBe(signed(content));
    }
    expect(filtersHash(longest)).not.toBe(filtersHash(NO_FILTERS));
    // another key: well-formed but not signed by a current secret, start again
    const cursor = codec.encode(position, longest, SNAPSHOT);
    expect(() => new CursorCodec([Buffer.from('another-key-0123456789abcdef0123456')]).decode(cursor, longest, SNAPSHOT)).toThrow(
      'The cursor is no longer accepted: start again without a cursor',
    );
  });

  it('a cursor of the current filter set keeps its refusals: other filter values, another snapshot', () => {
    const cursor = codec.encode(position, { ...NO_FILTERS, borough: ['brooklyn'] }, SNAPSHOT);
    expect(refusal(cursor)).toMatchObject({ statusCode: 422, code: 'invalid_cursor', fields: ['cursor'], message: CURSOR_OTHER_FILTERS });
    expect(() => codec.decode(cursor, { ...NO_FILTERS, borough: ['brooklyn'] }, '0000000000000000')).toThrow(CURSOR_OTHER_SNAPSHOT);
  });

  it('the filter set is derived from the filter names, in order', () => {
    expect(FILTER_SET_ID).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(FILTER_SET_ID).toBe(hash('sha256', JSON.stringify(FILTER_NAMES), 'base64url').slice(0, 8));
    expect(FILTER_NAMES.slice(0, EQUALITY_FILTERS.length)).toEqual(EQUALITY_FILTERS);
  });

  it('a cursor made under another filter set answers 422 invalid_cursor "no longer accepted", whatever its values', () => {
    // the service after one filter more: its set id, and the hash of the same (empty) values over its names
    const names = [...FILTER_NAMES, 'community_board'];
    const otherSet = hash('sha256', JSON.stringify(names), 'base64url').slice(0, 8);
    expect(otherSet).not.toBe(FILTER_SET_ID);
    const otherHash = hash('sha256', JSON.stringify(names.map(() => null)), 'base64url').slice(0, 16);
    for (const cursor of [
      signed([2, position.created_at, position.id, otherSet, otherHash, SNAPSHOT]),
      // even when the hash happens to match the current one
      signed([2, position.created_at, position.id, otherSet, filtersHash(NO_FILTERS), SNAPSHOT]),
      // format 1, which names no filter set, as the service handed it out
      signed([1, position.created_at, position.id, filtersHash(NO_FILTERS), SNAPSHOT]),
    ]) {
      expect(refusal(cursor), cursor).toMatchObject({ statusCode: 422, code: 'invalid_cursor', fields: ['cursor'], message: CURSOR_NO_LONGER_ACCEPTED });
    }
    // the same with the current set id is accepted: only the set differed
    expect(codec.decode(signed([2, position.created_at, position.id, FILTER_SET_ID, filtersHash(NO_FILTERS), SNAPSHOT]), NO_FILTERS, SNAPSHOT)).toEqual(position);
  });

  it('a filter set of the wrong type, or a malformed format-1 cursor, is "not valid"', () => {
    for (const content of [
      [2, position.created_at, position.id, null, filtersHash(NO_FILTERS), SNAPSHOT],
      [2, position.created_at, position.id, 12345678, filtersHash(NO_FILTERS), SNAPSHOT],
      [2, position.created_at, position.id, 'not a set', filtersHash(NO_FILTERS), SNAPSHOT],
      [2, position.created_at, position.id, filtersHash(NO_FILTERS), SNAPSHOT], // the current version without a set
      [1, position.created_at, position.id, FILTER_SET_ID, filtersHash(NO_FILTERS), SNAPSHOT], // format 1 with a set
      [1, position.created_at, String(position.id), filtersHash(NO_FILTERS), SNAPSHOT],
      [1, position.created_at, position.id, null, SNAPSHOT],
      [3, position.created_at, position.id, FILTER_SET_ID, filtersHash(NO_FILTERS), SNAPSHOT],
    ]) {
      expect(refusal(signed(content)), JSON.stringify(content)).toMatchObject({ code: 'invalid_cursor', fields: ['cursor'], message: CURSOR_NOT_VALID });
    }
  });
});

describe('cursor secrets across restarts and replicas (rotation)', () => {
  const position = { created_at: '2025-01-02T03:04:05', id: 1002 };
  const snapshot = 'f1x7u4e000000001';
  const codec = (...secrets: string[]) => new CursorCodec(secrets.map((secret) => Buffer.from(secret)));

  it('during a rotation the old secret is still accepted, and the new one signs', () => {
    const before = codec(OLD_SECRET).encode(position, NO_FILTERS, snapshot);
    const rotating = codec(NEW_SECRET, OLD_SECRET);
    expect(rotating.decode(before, NO_FILTERS, snapshot)).toEqual(position);
    const after = rotating.encode(position, NO_FILTERS, snapshot);
    expect(after).toBe(codec(NEW_SECRET).encode(position, NO_FILTERS, snapshot));
    expect(codec(NEW_SECRET).decode(after, NO_FILTERS, snapshot)).toEqual(position);
  });

  it('a cursor signed with a retired secret answers 422 invalid_cursor "start again without a cursor"', () => {
    const retired = codec(OLD_SECRET).encode(position, NO_FILTERS, snapshot);
    let error: unknown;
    try {
      codec(NEW_SECRET).decode(retired, NO_FILTERS, snapshot);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toMatchObject({ statusCode: 422, code: 'invalid_cursor', fields: ['cursor'], message: CURSOR_NO_LONGER_ACCEPTED });
    expect(CURSOR_NO_LONGER_ACCEPTED).toMatch(/start again without a cursor$/);
  });
});

describe('cursor secrets over HTTP: a page cursor from before a rotation, and from a retired secret', () => {
  const fixture = fixtureDuringSuite();

  async function firstCursor(secrets: string): Promise<string> {
    const service = await startTestApp(fixture.databaseUrl, { CURSOR_SECRET: secrets });
    try {
      return json<{ next_cursor: string }>(await service.get('/v1/service-requests?limit=2')).next_cursor;
    } finally {
      await service.app.close();
    }
  }

  async function nextPage(secrets: string, cursor: string) {
    const service = await startTestApp(fixture.databaseUrl, { CURSOR_SECRET: secrets });
    try {
      return await service.get(`/v1/service-requests?limit=2&cursor=${cursor}`);
    } finally {
      await service.app.close();
    }
  }

  it('a replica restarted with "new,old" follows a cursor of "old" and hands out cursors of "new"', async () => {
    const before = await firstCursor(OLD_SECRET);
    const page = await nextPage(`${NEW_SECRET},${OLD_SECRET}`, before);
    expect(page.statusCode).toBe(200);
    const next = json<{ items: unknown[]; next_cursor: string }>(page).next_cursor;
    expect((await nextPage(NEW_SECRET, next)).statusCode).toBe(200);
  });

  it('a replica holding only "new" answers a cursor of "old" with 422 invalid_cursor "start again"', async () => {
    const retired = await firstCursor(OLD_SECRET);
    expectError(await nextPage(NEW_SECRET, retired), 422, 'invalid_cursor', ['cursor'], CURSOR_NO_LONGER_ACCEPTED);
  });
});
