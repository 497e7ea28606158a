import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { createServiceApp } from '../../src/platform/app.js';
import { errorExample, errorResponses } from '../../src/platform/error-registry.js';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { componentRef, namedComponent } from '../../src/platform/openapi-components.js';
import { readPlatformSettings } from '../../src/platform/settings.js';

/**
 * The platform's OpenAPI rules for every route of every service (docs/decisions.md, "OpenAPI for
 * client generators"): an operationId and a description of each response are required at
 * registration; named components are referenced with $ref and validate; examples are kept, and
 * every error answer has the registry's example of each code it lists.
 */
const Thing = namedComponent('Thing', Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false, description: 'A thing' }));

const info = { title: 'Test API', version: '1', description: 'A test service', tags: [], usesApiKey: true };

async function serviceWith(register: (app: PlatformApp) => void): Promise<PlatformApp> {
  const app = await createServiceApp(
    { name: 'test', openapi: info, components: [Thing], registerRoutes: register },
    readPlatformSettings({ API_KEY: 'documented-key-0123' }, 0),
    { logger: false },
  );
  await app.ready();
  return app;
}

const answer = (description?: string) => Type.Object({ ok: Type.Boolean() }, description === undefined ? {} : { description });

describe('documented operations', () => {
  it('a route without an operationId stops the start, naming the route', async () => {
    await expect(serviceWith((app) => app.get('/v1/things', { schema: { response: { 200: answer('Things') } } }, () => ({ ok: true })))).rejects.toThrow(
      'GET /v1/things: schema.operationId must be a lowerCamelCase name',
    );
  });

  it('an operationId used twice stops the start', async () => {
    await expect(
      serviceWith((app) => {
        app.get('/v1/a', { schema: { operationId: 'getThing', response: { 200: answer('A') } } }, () => ({ ok: true }));
        app.get('/v1/b', { schema: { operationId: 'getThing', response: { 200: answer('B') } } }, () => ({ ok: true }));
      }),
    ).rejects.toThrow('operationId getThing is used twice');
  });

  it('a response without a description stops the start', async () => {
    await expect(
      serviceWith((app) => app.get('/v1/things', { schema: { operationId: 'listThings', response: { 200: answer() } } }, () => ({ ok: true }))),
    ).rejects.toThrow('GET /v1/things: the 200 response needs a description');
  });

  it('hidden routes need nothing; security follows requiresApiKey; components are $ref and validate; examples are kept', async () => {
    const app = await serviceWith((service) => {
      service.get('/hidden', { schema: { hide: true } }, () => 'ok');
      service.post(
        '/v1/things',
        {
          config: { requiresApiKey: true },
          schema: {
            operationId: 'createThing',
            body: componentRef(Thing, { examples: [{ name: 'a' }] }),
            response: { 200: componentRef(Thing, { description: 'The thing', examples: [{ name: 'a' }] }) },
          },
        },
        (request) => ({ name: request.body.name }),
      );
      service.get('/v1/count', { schema: { operationId: 'countThings', response: { 200: answer('How many') } } }, () => ({ ok: true }));
    });
    const spec = app.swagger() as any;
    const create = spec.paths['/v1/things'].post;
    expect(create.operationId).toBe('createThing');
    expect(create.security).toEqual([{ apiKey: [] }]);
    expect(spec.paths['/v1/count'].get.security).toEqual([]);
    expect(spec.paths['/hidden']).toBeUndefined();
    expect(create.requestBody.content['application/json']).toEqual({ schema: { $ref: '#/components/schemas/Thing' }, example: { name: 'a' } });
    expect(create.responses['200']).toMatchObject({
      description: 'The thing',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' }, example: { name: 'a' } } },
    });
    // A /v1/ route can be rate limited: its 429 and the RateLimit-* headers are described (only with a limit: RATE_LIMIT, or a key's own).
    expect(create.responses['429'].description).toMatch(/^Only when a rate limit applies \(RATE_LIMIT, or the key's own limit in API_KEYS_FILE\)\. .*rate_limited/);
    expect(Object.keys(create.responses['429'].headers).sort()).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']);
    expect(Object.keys(create.responses['200'].headers).sort()).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
    expect(spec.components.schemas.Thing.required).toEqual(['name']);
    const post = (payload: unknown) =>
      app.inject({ method: 'POST', url: '/v1/things', headers: { 'content-type': 'application/json', 'x-api-key': 'documented-key-0123' }, payload: JSON.stringify(payload) });
    expect((await post({ name: 'a' })).json()).toEqual({ name: 'a' });
    expect((await post({ name: '' })).json()).toMatchObject({ error: { code: 'invalid_request', fields: ['name'] } });
    await app.close();
  });

  it("an error answer has the registry's example: one code its example, several codes one named example each; invalid_request names the route's first field", async () => {
    const app = await serviceWith((service) => {
      service.get(
        '/v1/things/:name',
        {
          schema: {
            operationId: 'getThing',
            params: Type.Object({ name: Type.String() }),
            querystring: Type.Object({ color: Type.Optional(Type.String()) }),
            response: { 200: answer('The thing'), ...errorResponses('not_found', 'invalid_request', 'invalid_range') },
          },
        },
        () => ({ ok: true }),
      );
      service.get('/things', { schema: { operationId: 'getNothing', response: { 200: answer('Nothing'), ...errorResponses('invalid_request') } } }, () => ({ ok: true }));
    });
    const spec = app.swagger() as any;
    const answers = spec.paths['/v1/things/{name}'].get.responses;
    expect(answers['404'].content['application/json'].example).toEqual(errorExample('not_found'));
    expect(answers['422'].content['application/json'].example).toBeUndefined();
    expect(answers['422'].content['application/json'].examples).toEqual({
      invalid_request: { summary: 'invalid_request', description: expect.any(String), value: errorExample('invalid_request', ['name']) },
      invalid_range: { summary: 'invalid_range', description: expect.any(String), value: errorExample('invalid_range') },
    });
    // The rate limit's own 429 (a /v1/ route) has its example too.
    expect(answers['429'].content['application/json'].example).toEqual(errorExample('rate_limited'));
    // A route with no field of its own: the registry's unknown parameter.
    expect(spec.paths['/things'].get.responses['422'].content['application/json'].example).toEqual(errorExample('invalid_request'));
    await app.close();
  });
});
