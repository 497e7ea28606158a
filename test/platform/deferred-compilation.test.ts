import { Ajv, type ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { createServiceApp } from '../../src/platform/app.js';
import { DeferredCompilation } from '../../src/platform/deferred-compilation.js';
import { registerHealthRoutes } from '../../src/platform/health.js';
import { readPlatformSettings } from '../../src/platform/settings.js';
import { expectError } from '../support/http.js';

/**
 * Validators and serializers compiled on first use or after the service listens (the warm-start decision): the
 * stand-ins must behave as the compiled functions, each compiled once, whichever comes first.
 */
describe('deferred compilation', () => {
  const schema = { type: 'object', properties: { n: { type: 'integer', default: 1 } }, required: ['n'], additionalProperties: false };

  it('a validator compiles on its first call, once, and passes the data, the context and the errors through', () => {
    const deferred = new DeferredCompilation();
    let compiles = 0;
    const ajv = new Ajv({ allErrors: true, useDefaults: true });
    const validate = deferred.validator(schema, () => {
      compiles += 1;
      return ajv.compile(schema);
    });
    expect(compiles).toBe(0);
    expect(validate({ n: 2 })).toBe(true);
    expect(validate.errors).toBeNull();
    expect(validate({ n: 'x', m: 1 })).toBe(false);
    expect(validate.errors?.map((error) => error.keyword).sort()).toEqual(['additionalProperties', 'type']);
    // Fastify gives the parent only to a function with a schemaEnv: the defaults reach the root.
    expect((validate as ValidateFunction & { schemaEnv?: unknown }).schemaEnv).toBeTruthy();
    const parent: { body: unknown } = { body: {} };
    expect(validate(parent.body, { instancePath: '', parentData: parent, parentDataProperty: 'body', rootData: parent, dynamicAnchors: {} })).toBe(true);
    expect(parent.body).toEqual({ n: 1 });
    expect(compiles).toBe(1);
  });

  it('compilePending compiles what was not called yet, one per turn, and never again afterwards', async () => {
    const deferred = new DeferredCompilation();
    const compiled: string[] = [];
    const first = deferred.serializer(() => {
      compiled.push('first');
      return (data) => `first:${JSON.stringify(data)}`;
    });
    const second = deferred.serializer(() => {
      compiled.push('second');
      return (data) => `second:${JSON.stringify(data)}`;
    });
    const broken = deferred.serializer(() => {
      throw new Error('cannot compile');
    });
    expect(first(1)).toBe('first:1');
    const pending = deferred.compilePending();
    expect(compiled).toEqual(['first']); // the first step waits for a later turn
    await pending;
    expect(compiled).toEqual(['first', 'second']);
    expect(second({ a: 1 })).toBe('second:{"a":1}');
    expect(compiled).toEqual(['first', 'second']);
    // A schema that cannot compile fails the call that needs it, not the pending compilation.
    expect(() => broken(1)).toThrow('cannot compile');
  });

  it('/ready answers 503 with the service\'s unavailable code from the start until compilePending has compiled every schema, then 200', async () => {
    const app = await createServiceApp(
      {
        name: 'test',
        openapi: { title: 'Test API', version: '1', description: 'A test service', tags: [], usesApiKey: false },
        registerRoutes(service) {
          registerHealthRoutes(service, { unavailableCode: 'model_unavailable', check: () => undefined });
        },
      },
      readPlatformSettings({}, 0),
      { logger: false },
    );
    try {
      expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
      app.deferredCompilation.schedule();
      expectError(await app.inject({ method: 'GET', url: '/ready' }), 503, 'model_unavailable', []);
      expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
      const compiling = app.deferredCompilation.compilePending();
      expect(app.deferredCompilation.compiling).toBe(true);
      await compiling;
      expect(app.deferredCompilation.compiling).toBe(false);
      expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
