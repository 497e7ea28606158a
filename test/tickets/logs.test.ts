import { describe, expect, it } from 'vitest';
import { KEY, startTickets } from './tickets-app.js';

/** conventions.md: one JSON log line per request; never an API key, never a request body. */
describe('logs', () => {
  it('one JSON line per request with method, path, status, duration in ms and the request id', async () => {
    const { app, logs } = await startTickets({ API_KEY: KEY });
    const response = await app.inject({ method: 'POST', url: '/v1/classify?x=1', headers: { 'x-api-key': KEY, 'x-request-id': 'log-test-1' }, payload: { subject: 'refund' } });
    expect(response.statusCode).toBe(200);
    const lines = logs.lines().filter((line) => line.request_id === 'log-test-1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ method: 'POST', path: '/v1/classify', status: 200, request_id: 'log-test-1', msg: 'request' });
    expect(typeof lines[0]!.duration_ms).toBe('number');
    await app.close();
  });

  it('errors are logged with their status and the same request id as the error object', async () => {
    const { app, logs } = await startTickets({});
    const response = await app.inject({ method: 'GET', url: '/nowhere' });
    const id = response.json().error.request_id;
    expect(logs.lines().filter((line) => line.msg === 'request' && line.request_id === id)).toEqual([
      expect.objectContaining({ method: 'GET', path: '/nowhere', status: 404 }),
    ]);
    await app.close();
  });

  it('never logs an API key (right or wrong) nor a request body', async () => {
    const { app, logs } = await startTickets({ API_KEY: 'secret-key-123-abcdef,secret-key-456-abcdef' });
    await app.inject({ method: 'POST', url: '/v1/classify', headers: { 'x-api-key': 'secret-key-123-abcdef' }, payload: { subject: 'BODY-MARKER-subject', body: 'BODY-MARKER-body' } });
    await app.inject({ method: 'POST', url: '/v1/classify', headers: { 'x-api-key': 'wrong-key-789' }, payload: { subject: 'BODY-MARKER-2' } });
    await app.inject({ method: 'POST', url: '/v1/classify', headers: { 'x-api-key': 'secret-key-456-abcdef' }, payload: { subject: '' } });
    await app.close();
    const text = logs.text();
    expect(text).not.toContain('secret-key-123-abcdef');
    expect(text).not.toContain('secret-key-456-abcdef');
    expect(text).not.toContain('wrong-key-789');
    expect(text).not.toContain('BODY-MARKER');
  });

  it('the query string is not logged (only the path)', async () => {
    const { app, logs } = await startTickets({});
    await app.inject({ method: 'GET', url: '/v1/categories?token=abc123' });
    expect(logs.text()).not.toContain('abc123');
    await app.close();
  });
});
