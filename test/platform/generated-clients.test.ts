import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_HOUSE, type House } from '../../src/services/houses/house.js';
import { REPO_ROOT } from '../support/http.js';
import { SERVICE_NAMES, servedDescription, startThreeServices, type RunningService } from '../support/running-services.js';

/**
 * the warm-start decision, "OpenAPI descriptions that client generators love": a typed TypeScript client is
 * generated from each served description (openapi-typescript), a calling program
 * (test/generated-clients/<service>-calls.ts, openapi-fetch) is type-checked against it with tsc,
 * and then calls every operation of the running service. A description that breaks generation, a
 * renamed component or path, or an operation without a call fails here. Also: every media type of
 * every answer has an example (or named examples) that its schema accepts, and every request body
 * example of a description, sent as is, is answered 200, with the documented 200 example where the
 * answer is deterministic (tickets, houses).
 */
const run = promisify(execFile);
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

let running: Awaited<ReturnType<typeof startThreeServices>> | undefined;
let workDir: string;
const descriptions = new Map<string, Description>();

beforeAll(async () => {
  running = await startThreeServices();
  // Inside the repository (ignored by git), so that the programs resolve openapi-fetch from node_modules.
  mkdirSync(resolve(REPO_ROOT, '.test-results'), { recursive: true });
  workDir = mkdtempSync(resolve(REPO_ROOT, '.test-results/generated-clients-'));
  for (const service of running.services) {
    const description = await servedDescription(service);
    descriptions.set(service.name, description as unknown as Description);
    const types = astToString(await openapiTS(description as never));
    writeFileSync(join(workDir, `${service.name}-schema.d.ts`), types);
    copyFileSync(join(CALLS_DIR, `${service.name}-calls.ts`), join(workDir, `${service.name}-calls.ts`));
  }
  writeFileSync(
    join(workDir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
      },
      include: ['*.ts'],
    }),
  );
}, 60_000);

afterAll(async () => {
  await running?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('clients generated from the served descriptions', () => {
  it('type-check: each calling program against the types generated from its service', async () => {
    const tsc = resolve(REPO_ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', join(workDir, 'tsconfig.json')], { cwd: workDir }).catch(
      (error: unknown) => {
        const { stdout, stderr } = error as { stdout?: string; stderr?: string };
        return { stdout: `${stdout ?? ''}${stderr ?? ''}`, failed: true };
      },
    );
    expect(result.stdout, 'tsc on the generated clients').toBe('');
  }, 60_000);

  for (const name of SERVICE_NAMES) {
    it(`${name}: the generated client calls every operation of the running service, each answered 200`, async () => {
      const service = running!.services.find((one) => one.name === name) as RunningService;
      const program = (await import(pathToFileURL(join(workDir, `${name}-calls.ts`)).href)) as {
        callEveryOperation(baseUrl: string, apiKey: string, sampleHouse: House): Promise<Answers>;
      };
      // The houses program is handed the sample house; the others take no third argument.
      const answers = await program.callEveryOperation(service.url, service.apiKey, SAMPLE_HOUSE);
      const operationIds = operationsOf(descriptions.get(name) as Description).map(({ operation }) => operation.operationId);
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
      const description = descriptions.get(name) as Description;
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
      const service = running!.services.find((one) => one.name === name) as RunningService;
      for (const { path, method, operation } of operationsOf(descriptions.get(name) as Description)) {
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
