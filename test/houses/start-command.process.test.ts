import { describe, expect, it } from 'vitest';
import { expectError, fromFetch } from '../support/http.js';
import { runUntilExit, startService } from '../support/process.js';
import { house } from './support.js';

const ENTRY = 'src/services/houses/main.ts';

/** npm run start:houses as a user runs it: settings from the environment, the shipped model by default. */
describe('start command of the house-price service', () => {
  it('starts with the shipped model by default, logs it, answers over HTTP, exits 0 on SIGTERM', async () => {
    const service = await startService(ENTRY, { API_KEY: 'house-start-key-0123' });
    try {
      const ok = await fetch(`${service.baseUrl}/v1/estimates`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'house-start-key-0123' },
        body: JSON.stringify(house()),
      });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ model_version: 'kc-hgb-drift-2015-02', prices_as_of: '2015-02-28' });
      expectError(await fromFetch(await fetch(`${service.baseUrl}/v1/estimates`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })), 401, 'unauthorized', []);
      // Ready once the schemas left for after the start are compiled (a fraction of a second).
      const readySince = performance.now();
      let ready = await fetch(`${service.baseUrl}/ready`);
      while (ready.status === 503 && performance.now() - readySince < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        ready = await fetch(`${service.baseUrl}/ready`);
      }
      expect(ready.status).toBe(200);
    } finally {
      await service.stop();
    }
    expect(await service.exited).toBe(0);
    expect(service.stdout()).toMatch(/"msg":"model kc-hgb-drift-2015-02 loaded from [^"]*models\/kc-hgb-drift-2015-02\.json"/);
    expect(service.stdout()).not.toContain('house-start-key-0123');
  });

  it('with a missing model file it still starts: /health 200, /ready 503, and says why', async () => {
    const service = await startService(ENTRY, { MODEL_PATH: '/nonexistent/model.json' });
    try {
      expect((await fetch(`${service.baseUrl}/health`)).status).toBe(200);
      expectError(await fromFetch(await fetch(`${service.baseUrl}/ready`)), 503, 'model_unavailable', []);
    } finally {
      await service.stop();
    }
    expect(service.stdout()).toContain('no model loaded: model file /nonexistent/model.json is missing');
  });

  it('an invalid MODEL_SHA256 stops the start with one line naming the variable', async () => {
    const { code, stderr } = await runUntilExit(ENTRY, { PORT: '0', MODEL_SHA256: 'not-a-hash' });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Invalid setting MODEL_SHA256: /)]);
  });
});
