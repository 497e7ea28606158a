import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectMatchesReviewedCopy } from '../support/http.js';
import { startTickets } from './tickets-app.js';
import { appDuringSuite } from '../support/during-suite.js';

type Json = Record<string, any>;

/** ticket-classifier.md, "Other requirements" (OpenAPI) and the docs rows of the Endpoints table. */
describe('OpenAPI description and reference pages', () => {
  const app = appDuringSuite(async () => (await startTickets()).app);
  let spec: Json;
  beforeAll(async () => {
    spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });

  it('matches the reviewed copy openapi/tickets.json', () => {
    expectMatchesReviewedCopy(spec, 'openapi/tickets.json');
  });

  it('is OpenAPI 3.1 with title Ticket Classifier API and version 0.1.0', () => {
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.info.title).toBe('Ticket Classifier API');
    expect(spec.info.version).toBe('0.1.0');
  });

  it('groups endpoints by tag: tickets for classification and categories, health for the checks', () => {
    expect(spec.paths['/v1/classify'].post.tags).toEqual(['tickets']);
    expect(spec.paths['/v1/categories'].get.tags).toEqual(['tickets']);
    expect(spec.paths['/health'].get.tags).toEqual(['health']);
    expect(spec.paths['/ready'].get.tags).toEqual(['health']);
  });

  it('lists exactly the service paths (no docs or 405 routes)', () => {
    expect(Object.keys(spec.paths).sort()).toEqual(['/health', '/ready', '/v1/categories', '/v1/classify']);
    expect(Object.keys(spec.paths['/v1/classify'])).toEqual(['post']);
  });

  it('field limits match the validation: required subject 1..120, body at most 5000, no additional properties', () => {
    expect(spec.paths['/v1/classify'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Ticket' });
    const ticket = spec.components.schemas.Ticket;
    expect(ticket.required).toEqual(['subject']);
    expect(ticket.additionalProperties).toBe(false);
    expect(ticket.properties.subject).toMatchObject({ type: 'string', minLength: 1, maxLength: 120 });
    expect(ticket.properties.body).toMatchObject({ type: 'string', maxLength: 5000 });
  });

  it('describes the 422 of POST /v1/classify and the 503 of GET /ready with the error object', () => {
    const ref = { $ref: '#/components/schemas/ErrorResponse' };
    expect(spec.paths['/v1/classify'].post.responses['422'].content['application/json'].schema).toEqual(ref);
    expect(spec.paths['/ready'].get.responses['503'].content['application/json'].schema).toEqual(ref);
    expect(spec.components.schemas.ErrorResponse.properties.error.required).toEqual(['code', 'message', 'request_id', 'fields']);
  });

  it('describes every response of POST /v1/classify with its status and body schema', () => {
    const responses = spec.paths['/v1/classify'].post.responses;
    expect(Object.keys(responses).sort()).toEqual(['200', '401', '413', '415', '422', '429', '503']);
    expect(responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Classification' });
    expect(spec.components.schemas.Classification.properties.category).toEqual({ $ref: '#/components/schemas/Category' });
    expect(spec.components.schemas.Category.enum).toEqual(['billing', 'login', 'shipping', 'account', 'other']);
  });

  it('GET /docs is the interactive page (Swagger UI, try-it on) with assets served by the service', async () => {
    const page = await app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).not.toMatch(/https?:\/\/(?!localhost)/);
    const initializer = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(initializer.statusCode).toBe(200);
    expect(initializer.body).toContain('tryItOutEnabled');
    for (const asset of ['/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-ui.css']) {
      expect((await app.inject({ method: 'GET', url: asset })).statusCode, asset).toBe(200);
    }
  });

  it('GET /redoc is the read-only page, its script served by the service', async () => {
    const page = await app.inject({ method: 'GET', url: '/redoc' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<redoc spec-url="/openapi.json"');
    expect(page.body).toContain('<script src="/redoc/redoc.standalone.js">');
    expect(page.body).not.toMatch(/https?:\/\//);
    const script = await app.inject({ method: 'GET', url: '/redoc/redoc.standalone.js' });
    expect(script.statusCode).toBe(200);
    expect(script.body.length).toBeGreaterThan(100_000);
  });

  it('the docs pages carry a content security policy that allows only this origin', async () => {
    for (const url of ['/docs', '/redoc']) {
      const csp = String((await app.inject({ method: 'GET', url })).headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).not.toMatch(/https?:/);
    }
  });
});

describe('SHOW_DOCS=false', () => {
  it('GET /openapi.json, /docs and /redoc answer 404', async () => {
    const { app } = await startTickets({ SHOW_DOCS: 'false' });
    for (const url of ['/openapi.json', '/docs', '/docs/static/swagger-ui.css', '/redoc', '/redoc/redoc.standalone.js']) {
      expectError(await app.inject({ method: 'GET', url }), 404, 'not_found', [], 'Not Found');
    }
    expect((await app.inject({ method: 'POST', url: '/v1/classify', payload: { subject: 'x' } })).statusCode).toBe(200);
    await app.close();
  });

  it('SHOW_DOCS with a value other than true/false stops the start naming the variable', async () => {
    await expect(startTickets({ SHOW_DOCS: 'no' })).rejects.toThrow(/^Invalid setting SHOW_DOCS/);
  });
});
