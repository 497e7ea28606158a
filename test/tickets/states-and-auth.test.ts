import { describe, expect, it } from 'vitest';
import { expectError } from '../support/http.js';
import { readClassifierMode } from '../../src/services/tickets/settings.js';
import { KEY, startTickets } from './tickets-app.js';

/** ticket-classifier.md, "States and transitions". */
describe('states', () => {
  it('classifier available: /ready 200, classification works', async () => {
    const { app } = await startTickets({});
    expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/v1/classify', payload: { subject: 'refund' } })).statusCode).toBe(200);
    await app.close();
  });

  it('CLASSIFIER_MODE=unavailable: /ready answers 503 classifier_unavailable with a request id', async () => {
    const { app } = await startTickets({ CLASSIFIER_MODE: 'unavailable' });
    expectError(await app.inject({ method: 'GET', url: '/ready' }), 503, 'classifier_unavailable', [], 'The classifier is unavailable');
    await app.close();
  });

  it('CLASSIFIER_MODE=unavailable: POST /v1/classify answers 503 with the same code and no internal details', async () => {
    const { app } = await startTickets({ CLASSIFIER_MODE: 'unavailable' });
    const response = await app.inject({ method: 'POST', url: '/v1/classify', payload: { subject: 'refund' } });
    expectError(response, 503, 'classifier_unavailable', [], 'The classifier is unavailable');
    expect(response.body).not.toMatch(/stack|at |\.ts|Error:/);
    await app.close();
  });

  it('CLASSIFIER_MODE=unavailable: GET /health keeps answering 200', async () => {
    const { app } = await startTickets({ CLASSIFIER_MODE: 'unavailable' });
    const response = await app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
    await app.close();
  });

  it('service started with CLASSIFIER_MODE removed: available again', async () => {
    const { app } = await startTickets({ CLASSIFIER_MODE: undefined });
    expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
    await app.close();
  });

  it('CLASSIFIER_MODE with another value stops the start with a line naming the variable', async () => {
    await expect(startTickets({ CLASSIFIER_MODE: 'broken' })).rejects.toThrow(/^Invalid setting CLASSIFIER_MODE: "broken"/);
  });

  it('CLASSIFIER_MODE set but empty, blank or a list stops the start too; the word is read in any case', () => {
    for (const value of ['', '  ', 'unavailable,available', 'un available']) {
      expect(() => readClassifierMode({ CLASSIFIER_MODE: value }), JSON.stringify(value)).toThrow(/^Invalid setting CLASSIFIER_MODE: /);
    }
    expect(readClassifierMode({ CLASSIFIER_MODE: ' Unavailable ' })).toBe('unavailable');
    expect(readClassifierMode({})).toBe('available');
  });
});

/** ticket-classifier.md, "Authentication"; conventions.md, API_KEY. */
describe('authentication', () => {
  const classify = (headers: Record<string, string> = {}) => ({ method: 'POST' as const, url: '/v1/classify', headers, payload: { subject: 'refund' } });

  it('API_KEY set: POST /v1/classify without the header answers 401 unauthorized', async () => {
    const { app } = await startTickets({ API_KEY: KEY });
    expectError(await app.inject(classify()), 401, 'unauthorized', [], 'Missing or invalid API key');
    await app.close();
  });

  it('API_KEY set: a wrong value answers 401', async () => {
    const { app } = await startTickets({ API_KEY: KEY });
    expectError(await app.inject(classify({ 'x-api-key': 'wrong' })), 401, 'unauthorized', []);
    expectError(await app.inject(classify({ 'x-api-key': `${KEY}x` })), 401, 'unauthorized', []);
    expectError(await app.inject(classify({ 'x-api-key': '' })), 401, 'unauthorized', []);
    await app.close();
  });

  it('API_KEY set: the correct value answers normally', async () => {
    const { app } = await startTickets({ API_KEY: KEY });
    const response = await app.inject(classify({ 'x-api-key': KEY }));
    expect(response.statusCode).toBe(200);
    expect(response.json().category).toBe('billing');
    await app.close();
  });

  it('several keys for rotation: each one is accepted', async () => {
    const { app } = await startTickets({ API_KEY: 'old-key-0123456789, new-key-0123456789' });
    expect((await app.inject(classify({ 'x-api-key': 'old-key-0123456789' }))).statusCode).toBe(200);
    expect((await app.inject(classify({ 'x-api-key': 'new-key-0123456789' }))).statusCode).toBe(200);
    expectError(await app.inject(classify({ 'x-api-key': 'old-key-0123456789, new-key-0123456789' })), 401, 'unauthorized', []);
    await app.close();
  });

  it('GET /health, GET /ready and GET /v1/categories need no key', async () => {
    const { app } = await startTickets({ API_KEY: KEY });
    for (const url of ['/health', '/ready', '/v1/categories']) {
      expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
    await app.close();
  });

  it('API_KEY unset: no key is enforced and a warning is logged at start', async () => {
    const { app, logs } = await startTickets({});
    expect((await app.inject(classify())).statusCode).toBe(200);
    expect(logs.lines().some((line) => line.level === 40 && String(line.msg).includes('API_KEY is not set'))).toBe(true);
    await app.close();
  });

  it('API_KEY set: no warning at start', async () => {
    const { app, logs } = await startTickets({ API_KEY: KEY });
    expect(logs.lines().some((line) => String(line.msg).includes('API_KEY'))).toBe(false);
    await app.close();
  });

  it('401 comes before validation: an invalid body without a key is 401', async () => {
    const { app } = await startTickets({ API_KEY: KEY });
    expectError(await app.inject({ method: 'POST', url: '/v1/classify', payload: { nope: 1 } }), 401, 'unauthorized', []);
    await app.close();
  });
});
