import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';

/**
 * The layout decisions, checked on the sources themselves: no two modules of src/ import each other,
 * even through others or for types only (a reader follows the imports one way, from the entry points
 * down to the platform and the snapshot); the wiring (src/platform/app.ts, every routes/ folder) reads
 * in one screen: no function of it longer than WIRING_FUNCTION_MAX_LINES; the code and docs name
 * decisions, never a tracker's numbers (a tracker's number means nothing to a reader without the
 * tracker); and bench/README.md stays a reference that a reader can take in (the runs behind its
 * figures are in git).
 */
function filesUnder(folder: string, extensions: readonly string[]): string[] {
  const found: string[] = [];
  for (const name of readdirSync(folder)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(folder, name);
    if (statSync(path).isDirectory()) found.push(...filesUnder(path, extensions));
    else if (extensions.some((extension) => name.endsWith(extension))) found.push(path);
  }
  return found;
}

/** The modules of src/ each module imports statically (import and export … from, types included). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of filesUnder(resolve(REPO_ROOT, 'src'), ['.ts'])) {
    const source = readFileSync(file, 'utf8');
    const imported = [...source.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gm)].map((match) =>
      resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')),
    );
    graph.set(file, imported);
  }
  return graph;
}

/** Every cycle of the graph, each as the modules along it (relative to the repository). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (module: string): void => {
    path.push(module);
    onPath.add(module);
    for (const next of graph.get(module) ?? []) {
      if (onPath.has(next)) cycles.push([...path.slice(path.indexOf(next)), next].map((file) => relative(REPO_ROOT, file)));
      else if (!done.has(next) && graph.has(next)) visit(next);
    }
    path.pop();
    onPath.delete(module);
    done.add(module);
  };
  for (const module of graph.keys()) if (!done.has(module)) visit(module);
  return cycles;
}

/** The longest a function of the wiring may be, its signature and closing brace included. */
const WIRING_FUNCTION_MAX_LINES = 80;

/** The wiring: the platform's app.ts and every module of a routes/ folder of src/. */
function wiringFiles(): string[] {
  return [
    resolve(REPO_ROOT, 'src/platform/app.ts'),
    ...filesUnder(resolve(REPO_ROOT, 'src'), ['.ts']).filter((file) => relative(REPO_ROOT, file).split('/').includes('routes')),
  ];
}

/** Every function of a module (declarations, methods, arrow functions) longer than `maxLines`, as `path:line name (n lines)`. */
function longFunctions(path: string, source: string, maxLines: number): string[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const lines = file.getLineAndCharacterOfPosition(node.getEnd()).line - first + 1;
      const name = node.name?.getText(file) ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(file) : 'a function');
      if (lines > maxLines) found.push(`${path}:${first + 1} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('the layout of the sources', () => {
  it('no import cycle between the modules of src/, types included', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(50);
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('the cycle check sees a cycle (the control of the test above)', () => {
    const a = resolve(REPO_ROOT, 'src/a.ts');
    const b = resolve(REPO_ROOT, 'src/b.ts');
    expect(cyclesOf(new Map([[a, [b]], [b, [a]]]))).toEqual([['src/a.ts', 'src/b.ts', 'src/a.ts']]);
  });

  it(`no function of src/platform/app.ts or of a routes/ folder is longer than ${WIRING_FUNCTION_MAX_LINES} lines`, () => {
    const files = wiringFiles();
    expect(files.length).toBeGreaterThan(10);
    const found = files.flatMap((file) => longFunctions(relative(REPO_ROOT, file), readFileSync(file, 'utf8'), WIRING_FUNCTION_MAX_LINES));
    expect(found).toEqual([]);
  });

  it('the length check sees a long function, an arrow function inside one included (the control of the test above)', () => {
    const body = Array.from({ length: 79 }, (_, index) => `  const v${index} = ${index};`).join('\n');
    const source = `export function long(): void {\n${body}\n}\nconst short = (): void => {};\nfunction outer(): void {\n  const inner = (): void => {\n${body}\n  };\n}\n`;
    expect(longFunctions('a.ts', source, 80)).toEqual(['a.ts:1 long (81 lines)', 'a.ts:83 outer (83 lines)', 'a.ts:84 inner (81 lines)']);
  });

  it('code, tests and docs name decisions, not tracker numbers', () => {
    const files = [
      ...['src', 'test', 'bench', 'docs', 'scripts', 'training', 'deploy'].flatMap((folder) => {
        try {
          return filesUnder(resolve(REPO_ROOT, folder), ['.ts', '.js', '.mjs', '.md', '.sh', '.py', '.yaml', '.html']);
        } catch {
          return [];
        }
      }),
      ...['README.md', 'ARCHITECTURE.md', 'compose.yaml', 'Containerfile'].map((name) => resolve(REPO_ROOT, name)),
    ];
    const found = files.flatMap((file) => {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        return [];
      }
      return [...text.matchAll(/\bissues?\s*#?\d+/gi)].map((match) => `${relative(REPO_ROOT, file)}: ${match[0]}`);
    });
    expect(found).toEqual([]);
  });

  it("each folder of the data API's code says what it holds: a README.md, or an index.ts that opens with a comment", () => {
    const root = resolve(REPO_ROOT, 'src/services/requests');
    const folders = readdirSync(root).filter((name) => statSync(join(root, name)).isDirectory() && readdirSync(join(root, name)).some((file) => file.endsWith('.ts')));
    expect(folders.length).toBeGreaterThanOrEqual(4);
    const unexplained = folders.filter((folder) => {
      const files = readdirSync(join(root, folder));
      if (files.includes('README.md')) return false;
      return !(files.includes('index.ts') && /^\/\*\*/m.test(readFileSync(join(root, folder, 'index.ts'), 'utf8')));
    });
    expect(unexplained).toEqual([]);
  });

  it('bench/README.md is a reference of at most 600 lines', () => {
    const lines = readFileSync(resolve(REPO_ROOT, 'bench/README.md'), 'utf8').split('\n').length;
    expect(lines, 'bench/README.md: the current figure of each area, with its date and command; the history stays in git').toBeLessThanOrEqual(600);
  });
});
