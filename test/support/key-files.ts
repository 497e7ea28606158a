import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { readKeyFile, writeKeyFile, type KeyFileEntry } from '../../src/platform/api-keys/key-file.js';
import { runKeysCommand } from '../../src/platform/api-keys/keys-command.js';

/** What `npm run keys` printed and returned. */
export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run keys -- <args> --file <path>`, in this process (the command's own code, keys-command.ts). */
export async function keysCommand(path: string, ...args: string[]): Promise<CommandRun> {
  let stdout = '';
  let stderr = '';
  const code = await runKeysCommand([...args, '--file', path], {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: {},
  });
  return { code, stdout, stderr };
}

/** A key made by the command: the key printed once, and the id it names on stderr. */
export async function createKey(path: string, ...args: string[]): Promise<{ key: string; id: string }> {
  const run = await keysCommand(path, 'create', ...args);
  if (run.code !== 0) throw new Error(`keys create failed: ${run.stderr}`);
  const id = /Created (\S+)/.exec(run.stderr)?.[1];
  if (id === undefined) throw new Error(`keys create named no id: ${run.stderr}`);
  return { key: run.stdout.trim(), id };
}

/** Changes one entry of the file as an operator editing it would (written whole, as the command does). */
export async function editKey(path: string, id: string, change: (entry: KeyFileEntry) => void): Promise<void> {
  const { content } = await readKeyFile(path);
  const entry = content.keys.find((key) => key.id === id);
  if (entry === undefined) throw new Error(`no key ${id}`);
  change(entry);
  await writeKeyFile(path, content);
}

/** The path of a key file in a directory of its own, removed when the test that asked for it ends. */
export function keyFilePath(): string {
  const directory = mkdtempSync(join(tmpdir(), 'api-keys-'));
  onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
  return join(directory, 'api-keys.json');
}

/** Waits until `condition` holds (polled every 25 ms); the milliseconds it took, or throws after `limitMs`. */
export async function within(limitMs: number, condition: () => boolean | Promise<boolean>): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await condition()) return performance.now() - started;
    if (performance.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
