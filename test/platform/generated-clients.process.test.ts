import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';
import { servicesDuringSuite } from '../support/running-services.js';

/**
 * the warm-start decision, "OpenAPI descriptions that client generators love": a typed TypeScript
 * client is generated from each served description (openapi-typescript), and the calling program
 * (test/generated-clients/<service>-calls.ts, openapi-fetch) is type-checked against it with tsc, in
 * a process of its own. A description that breaks generation, or a renamed component or path,
 * fails here (the programs' calls of the running services: generated-clients.test.ts).
 */
const run = promisify(execFile);
const CALLS_DIR = resolve(REPO_ROOT, 'test/generated-clients');

let workDir: string;

const served = servicesDuringSuite();

beforeAll(async () => {
  // Inside the repository (ignored by git), so that the programs resolve openapi-fetch from node_modules.
  mkdirSync(resolve(REPO_ROOT, '.test-results'), { recursive: true });
  workDir = mkdtempSync(resolve(REPO_ROOT, '.test-results/generated-clients-'));
  for (const [name, description] of served.descriptions) {
    writeFileSync(join(workDir, `${name}-schema.d.ts`), astToString(await openapiTS(description as never)));
    copyFileSync(join(CALLS_DIR, `${name}-calls.ts`), join(workDir, `${name}-calls.ts`));
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

afterAll(() => {
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
});
