import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { SAMPLE_HOUSE, type House } from '../../src/services/houses/house.js';
import { REPO_ROOT } from '../support/http.js';
import { SERVICE_NAMES, servicesDuringSuite, type RunningService, type ServiceName } from '../support/running-services.js';

/**
 * the warm-start decision, "OpenAPI descriptions that client generators love": a calling program
 * (test/generated-clients/<service>-calls.ts, openapi-fetch) calls every operation of the running
 * service (its type-check against the client generated from the served description:
 * generated-clients.process.test.ts). An operation without a call fails here. Also: every media type of
 * every answer has an example (or named examples) that its schema accepts, and every request body
 * example of a description, sent as is, is answered 200, with the documented 200 example where the
 * answer is deterministic (tickets, houses).
 */
const CALLS_DIR = resolve(REPO_ROOT, 'test/generated-clients');

type Media = { schema?: object; example?: unknown; examples?: Record<string, { value?: unknown }> };
type Operation = {
  operationId: string;
  requestBody?: { content: { 'application/json': { example?: unknown } } };
  responses: Record<string, { content?: Record<string, Media> }>;
};
type Description = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, unknown> } };
type Answers = Record<string, { status: number; body: unknown }>;

function operationsOf(description: Description): { path: string; method: string; operation: Operation }[] {
  return Object.entries(description.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
  );
}

/** application/json, application/geo+json...: the media types whose examples are JSON values. */
const isJsonMediaType = (mediaType: string) => /^application\/([a-z.-]+\+)?json$/.test(mediaType);

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * A check of values against the description's schemas (OpenAPI 3.1: JSON Schema 2020-12): each
 * schema is compiled beside the description's components, so that `#/components/schemas/...` resolves.
 */
function schemaCheck(description: Description): (schema: object, value: unknown) => string | undefined {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  return (schema, value) => {
    const validate = ajv.compile({ ...schema, components: description.components ?? {} });
    return validate(value) ? undefined : ajv.errorsText(validate.errors);
  };
}

const served = servicesDuringSuite();
const descriptionOf = (name: ServiceName): Description => served.descriptions.get(name) as unknown as Description;

describe('clients generated from the served descriptions', () => {
  for (const name of SERVICE_NAMES) {
    it(`${name}: the generated client calls every operation of the running service, each answered 200`, async () => {
      const service = served.services.find((one) => one.name === name) as RunningService;
      const program = (await import(pathToFileURL(join(CALLS_DIR, `${name}-calls.ts`)).href)) as {
        callEveryOperation(baseUrl: string, apiKey: string, sampleHouse: House): Promise<Answers>;
      };
      // The houses program is handed the sample house; the others take no third argument.
      const answers = await program.callEveryOperation(service.url, service.apiKey, SAMPLE_HOUSE);
      const operationIds = operationsOf(descriptionOf(name)).map(({ operation }) => operation.operationId);
      expect(Object.keys(answers).sort()).toEqual([...operationIds].sort());
      for (const [operationId, answer] of Object.entries(answers)) {
        expect(answer.status, `${operationId}: ${JSON.stringify(answer.body)}`).toBe(200);
      }
    });
  }
});

describe('the examples of the served descriptions', () => {
  for (const name of SERVICE_NAMES) {
    it(`${name}: every media type of every answer has an example that its schema accepts`, () => {
      const description = descriptionOf(name);
      const check = schemaCheck(description);
      let checked = 0;
      for (const { path, method, operation } of operationsOf(description)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          for (const [mediaType, media] of Object.entries(response.content ?? {})) {
            const where = `${method.toUpperCase()} ${path} ${status} ${mediaType}`;
            const examples = media.examples === undefined ? [media.example] : Object.values(media.examples).map((example) => example.value);
            expect(examples.length, `${where}: named examples`).toBeGreaterThan(0);
            for (const example of examples) {
              expect(example, `${where}: an example`).toBeDefined();
              if (!isJsonMediaType(mediaType)) continue;
              expect(media.schema, `${where}: a schema`).toBeDefined();
              expect(check(media.schema ?? {}, example), `${where}: the example against its schema`).toBeUndefined();
            }
            checked += 1;
          }
        }
      }
      expect(checked, 'media types checked').toBeGreaterThan(0);
    });
  }

  for (const name of SERVICE_NAMES) {
    it(`${name}: every request body example, sent as is, is answered 200 (with the documented answer where it is deterministic)`, async () => {
      const service = served.services.find((one) => one.name === name) as RunningService;
      for (const { path, method, operation } of operationsOf(descriptionOf(name))) {
        const media = operation.requestBody?.content['application/json'];
        expect(Object.keys(operation.responses['200']?.content ?? {}).length, `${operation.operationId}: a 200 answer with a body`).toBeGreaterThan(0);
        const answerExample = operation.responses['200']?.content?.['application/json']?.example;
        if (operation.requestBody === undefined) continue;
        expect(media?.example, `${operation.operationId}: an example of the request body`).toBeDefined();
        const response = await fetch(`${service.url}${path}`, {
          method: method.toUpperCase(),
          headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
          body: JSON.stringify(media?.example),
        });
        const body: unknown = await response.json();
        expect(response.status, `${operation.operationId}: ${JSON.stringify(body)}`).toBe(200);
        if (name !== 'requests') expect(body, operation.operationId).toEqual(answerExample);
      }
    });
  }
});
