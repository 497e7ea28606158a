import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';
import { SERVICE_NAMES, servedDescription, startThreeServices } from '../support/running-services.js';

/**
 * the warm-start decision, "OpenAPI descriptions that client generators love": `redocly lint` with the
 * repository's ruleset (redocly.yaml) reports no error and no warning on the description each
 * running service serves; and the text of every description renders in Swagger UI and ReDoc (no
 * HTML-like `<name>` outside code spans, no pointer to a repository file, no "Default Response").
 */
const run = promisify(execFile);
const REDOCLY = resolve(REPO_ROOT, 'node_modules/@redocly/cli/bin/cli.js');

let running: Awaited<ReturnType<typeof startThreeServices>> | undefined;
let workDir: string;
const descriptions = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  running = await startThreeServices();
  workDir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  for (const service of running.services) descriptions.set(service.name, await servedDescription(service));
});
afterAll(async () => {
  await running?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

/** Every `description` text of a description, with where it is. */
function descriptionTexts(value: unknown, where = '#'): { where: string; text: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => descriptionTexts(item, `${where}/${index}`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => {
    if (key === 'example') return [];
    if (key === 'description' && typeof item === 'string') return [{ where, text: item }];
    return descriptionTexts(item, `${where}/${key}`);
  });
}

describe('the served OpenAPI descriptions', () => {
  for (const name of SERVICE_NAMES) {
    it(`${name}: redocly lint (redocly.yaml) reports no error and no warning`, async () => {
      const file = join(workDir, `${name}.json`);
      writeFileSync(file, JSON.stringify(descriptions.get(name)));
      const { stdout } = await run(process.execPath, [REDOCLY, 'lint', '--format=json', '--config', resolve(REPO_ROOT, 'redocly.yaml'), file], {
        cwd: REPO_ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      }).catch((error: unknown) => ({ stdout: (error as { stdout: string }).stdout }));
      const report = JSON.parse(stdout) as LintReport;
      const problems = report.problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`);
      expect(problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    }, 30_000);

    it(`${name}: every text renders in both docs pages and points at nothing a reader cannot open`, () => {
      const texts = descriptionTexts(descriptions.get(name));
      expect(texts.length).toBeGreaterThan(10);
      for (const { where, text } of texts) {
        const outsideCode = text.replace(/`[^`]*`/g, '');
        expect(outsideCode, `${where}: an HTML-like tag outside a code span`).not.toMatch(/<\/?[A-Za-z][^>]*>/);
        expect(text, `${where}: a repository file`).not.toMatch(/\b(docs|src|test)\/|\.md\b/);
        expect(text, where).not.toBe('Default Response');
      }
    });
  }
});
