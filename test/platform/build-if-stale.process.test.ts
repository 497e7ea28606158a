import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';

/**
 * The warm-start decision: "`npm start` does not rebuild when the build is up to date". The start commands' build
 * check (scripts/build-if-stale.mjs, run by scripts/start.mjs) on a small project of its own: it
 * compiles when there is no build and when a source is newer than the build, and when the build is
 * up to date it does not even load the compiler (the compiler is taken away and the check passes).
 */
const script = resolve(REPO_ROOT, 'scripts/build-if-stale.mjs');
const { buildIfStale } = (await import(script)) as { buildIfStale: (root: string) => void };

const project = mkdtempSync(join(tmpdir(), 'build-if-stale-'));
const compiler = join(project, 'node_modules', 'typescript');
afterAll(() => rmSync(project, { recursive: true, force: true }));

function withCompiler(present: boolean): void {
  rmSync(compiler, { force: true });
  if (present) symlinkSync(resolve(REPO_ROOT, 'node_modules', 'typescript'), compiler, 'dir');
}

describe('npm start builds only what changed (scripts/build-if-stale.mjs)', () => {
  mkdirSync(join(project, 'src'));
  mkdirSync(join(project, 'node_modules'));
  writeFileSync(join(project, 'src', 'a.ts'), 'export const a: number = 1;\n');
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', target: 'es2022', outDir: 'dist', composite: true, noEmit: true } }));
  writeFileSync(join(project, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: false }, include: ['src'] }));
  const output = join(project, 'dist', 'src', 'a.js');
  const marker = join(project, 'dist', 'tsconfig.build.tsbuildinfo');

  it('builds when there is no build', () => {
    withCompiler(true);
    buildIfStale(project);
    expect(readFileSync(output, 'utf8')).toMatch(/\ba = 1;/);
    expect(existsSync(marker)).toBe(true);
  });

  it('does not load the compiler when the build is up to date (a warm start)', () => {
    withCompiler(false);
    const before = statSync(marker).mtimeMs;
    expect(() => buildIfStale(project)).not.toThrow();
    expect(statSync(marker).mtimeMs).toBe(before);
  });

  it('builds again when a source is newer than the build', () => {
    withCompiler(true);
    writeFileSync(join(project, 'src', 'a.ts'), 'export const a: number = 2;\n');
    const later = new Date(statSync(marker).mtimeMs + 5000);
    utimesSync(join(project, 'src', 'a.ts'), later, later);
    buildIfStale(project);
    expect(readFileSync(output, 'utf8')).toMatch(/\ba = 2;/);
  });
});
