import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';
import { SERVICE_NAMES, servicesDuringSuite } from '../support/running-services.js';

/**
 * the warm-start decision, "OpenAPI descriptions that client generators love": `redocly lint` (in
 * a process of its own) with the repository's ruleset (redocly.yaml) reports no error and no warning
 * on the description each running service serves.
 */
const run = promisify(execFile);
const REDOCLY = resolve(REPO_ROOT, 'node_modules/@redocly/cli/bin/cli.js');
const served = servicesDuringSuite();
const workDir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

describe('the served OpenAPI descriptions', () => {
  for (const name of SERVICE_NAMES) {
    it(`${name}: redocly lint (redocly.yaml) reports no error and no warning`, async () => {
      const file = join(workDir, `${name}.json`);
      writeFileSync(file, JSON.stringify(served.descriptions.get(name)));
      const { stdout } = await run(process.execPath, [REDOCLY, 'lint', '--format=json', '--config', resolve(REPO_ROOT, 'redocly.yaml'), file], {
        cwd: REPO_ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      }).catch((error: unknown) => ({ stdout: (error as { stdout: string }).stdout }));
      const report = JSON.parse(stdout) as LintReport;
      const problems = report.problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`);
      expect(problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    }, 30_000);
  }
});
