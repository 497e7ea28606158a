import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SettingsError } from '../../src/platform/setting-readers.js';
import { REVIEWED_MODEL } from '../../src/services/houses/model/index.js';
import { readHouseSettings } from '../../src/services/houses/settings.js';
import { REPO_ROOT } from '../support/http.js';

describe('house settings', () => {
  it('defaults: port 8002, host 127.0.0.1, the reviewed model file and SHA-256', () => {
    const settings = readHouseSettings({});
    expect(settings.port).toBe(8002);
    expect(settings.host).toBe('127.0.0.1');
    expect(settings.apiKeys).toEqual([]);
    expect(settings.model).toEqual({ path: resolve(REPO_ROOT, REVIEWED_MODEL.path), sha256: REVIEWED_MODEL.sha256 });
  });
  it('MODEL_PATH and MODEL_SHA256 override the reviewed configuration (hash in any case)', () => {
    const settings = readHouseSettings({ MODEL_PATH: '/srv/model.json', MODEL_SHA256: 'AB'.repeat(32), PORT: '9000', API_KEY: 'house-key-a-0123456,house-key-b-0123456' });
    expect(settings.model).toEqual({ path: '/srv/model.json', sha256: 'ab'.repeat(32) });
    expect(settings.port).toBe(9000);
    expect(settings.apiKeys).toEqual(['house-key-a-0123456', 'house-key-b-0123456']);
  });
  it('a relative MODEL_PATH is taken from the working directory; alone it keeps the reviewed SHA-256', () => {
    const settings = readHouseSettings({ MODEL_PATH: 'other/model.json' });
    expect(settings.model).toEqual({ path: resolve(process.cwd(), 'other/model.json'), sha256: REVIEWED_MODEL.sha256 });
  });
  for (const bad of ['abc', 'g'.repeat(64), 'a'.repeat(63), 'a'.repeat(65)]) {
    it(`MODEL_SHA256=${bad.slice(0, 10)}... (length ${bad.length}) is a SettingsError naming the variable`, () => {
      expect(() => readHouseSettings({ MODEL_SHA256: bad })).toThrow(SettingsError);
      expect(() => readHouseSettings({ MODEL_SHA256: bad })).toThrow(/^Invalid setting MODEL_SHA256: /);
    });
  }
  it.each([
    ['MODEL_PATH', ''],
    ['MODEL_PATH', '   '],
    ['MODEL_PATH', 'models/kc\u0000.json'],
    ['MODEL_SHA256', ''],
    ['MODEL_SHA256', ' \t '],
  ])('%s=%j (set but unusable) is a SettingsError naming the variable', (variable, value) => {
    expect(() => readHouseSettings({ [variable]: value })).toThrow(SettingsError);
    expect(() => readHouseSettings({ [variable]: value })).toThrow(new RegExp(`^Invalid setting ${variable}: `));
  });
  it('a bad platform setting still names its variable', () => {
    expect(() => readHouseSettings({ PORT: 'eighty' })).toThrow(/^Invalid setting PORT: /);
  });
});
