import { describe, expect, it } from 'vitest';
import { SettingsError } from '../../src/platform/settings.js';
import { CursorCodec, filtersHash } from '../../src/services/requests/cursor.js';
import { NO_FILTERS, normalizeTimeBound } from '../../src/services/requests/list-filters.js';
import { defaultSnapshotPath, readRequestSettings } from '../../src/services/requests/settings.js';
import { REPO_ROOT } from '../support/http.js';


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
    expect(again.cursorSecret.equals(settings.cursorSecret)).toBe(false);
  });

  it('API_KEY, CURSOR_SECRET and DATABASE_URL as given', () => {
    const settings = readRequestSettings({
      API_KEY: 'one,two',
      CURSOR_SECRET: 'a-shared-secret-of-replicas',
      DATABASE_URL: 'postgresql://user@db.example:5432/city?schema=snapshot_2025&sslmode=disable',
      PORT: '9000',
    });
    expect(settings.apiKeys).toEqual(['one', 'two']);
    expect(settings.generatedApiKey).toBeNull();
    expect(settings.cursorSecret.toString()).toBe('a-shared-secret-of-replicas');
    expect(settings.database).toEqual({ kind: 'postgres', url: 'postgresql://user@db.example:5432/city?sslmode=disable', schema: 'snapshot_2025' });
    expect(settings.port).toBe(9000);
    expect(readRequestSettings({ DATABASE_URL: 'postgres://localhost/db' }).database).toMatchObject({ schema: 'public' });
    expect(readRequestSettings({ DATABASE_URL: '/tmp/x.sqlite' }).database).toEqual({ kind: 'sqlite', path: '/tmp/x.sqlite', isDefault: false });
  });

  it('an invalid value stops the start naming the variable', () => {
    const cases: [Record<string, string>, string][] = [
      [{ CURSOR_SECRET: 'short' }, 'CURSOR_SECRET'],
      [{ DATABASE_URL: 'mysql://localhost/db' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'postgres://localhost/db?schema=bad-name' }, 'DATABASE_URL'],
      [{ PORT: 'abc' }, 'PORT'],
    ];
    for (const [env, variable] of cases) {
      expect(() => readRequestSettings(env)).toThrow(SettingsError);
      expect(() => readRequestSettings(env)).toThrow(`Invalid setting ${variable}`);
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

  it('a cursor stays under 200 characters for any position, and round-trips', () => {
    const codec = new CursorCodec(Buffer.from('0123456789abcdef0123'));
    const position = { created_at: '2025-06-30T23:59:59', id: Number.MAX_SAFE_INTEGER };
    const filters = { ...NO_FILTERS, complaint_type: ['x'.repeat(200), null], created_from: '2025-01-01T00:00:00.123456', bbox: { minLongitude: -180, minLatitude: -90, maxLongitude: 180, maxLatitude: 90 } };
    const cursor = codec.encode(position, filters, 'ffffffffffffffff');
    expect(cursor.length).toBeLessThanOrEqual(200);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(codec.decode(cursor, filters, 'ffffffffffffffff')).toEqual(position);
    // another key: not valid
    expect(() => new CursorCodec(Buffer.from('another-key-0123456')).decode(cursor, filters, 'ffffffffffffffff')).toThrow('The cursor is not valid');
    expect(filtersHash(filters)).not.toBe(filtersHash(NO_FILTERS));
  });
});
