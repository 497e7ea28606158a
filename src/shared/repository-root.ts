import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository root: the nearest folder above `start` (default: this file's folder) holding
 * package.json. Works from src/ (tsx, vitest) and from dist/src/ (the start commands); falls back
 * to the working directory when no package.json is found.
 */
export function repositoryRoot(start: string = dirname(fileURLToPath(import.meta.url))): string {
  let folder = start;
  for (;;) {
    if (existsSync(resolve(folder, 'package.json'))) return folder;
    const parent = dirname(folder);
    if (parent === folder) return process.cwd();
    folder = parent;
  }
}
