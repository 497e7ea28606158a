import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import { REPO_ROOT } from './http.js';

/** A service started as its start command would (node running the TypeScript entry point via tsx). */
export interface RunningService {
  child: ChildProcessWithoutNullStreams;
  baseUrl: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** SIGTERM (when still running), then its exit code: the end of every test that started it. */
  stop: () => Promise<number | null>;
}

export function runEntryPoint(entry: string, env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', resolve(REPO_ROOT, entry)], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
}

/** Starts the entry point on a free port and resolves once it listens. */
export async function startService(entry: string, env: Record<string, string> = {}, timeoutMs = 20_000): Promise<RunningService> {
  const child = runEntryPoint(entry, { PORT: '0', HOST: '127.0.0.1', ...env });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  const baseUrl = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${out}${err}`)), timeoutMs);
    const look = () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    };
    child.stdout.on('data', look);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}: ${out}${err}`));
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  return { child, baseUrl, stdout: () => out, stderr: () => err, exited, stop };
}

/**
 * Runs the entry point until it exits by itself (a start that is refused), with what it wrote; a
 * process still running after `timeoutMs` (a start that was not refused) is killed.
 */
export async function runUntilExit(
  entry: string,
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = runEntryPoint(entry, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolveExit) => child.on('exit', resolveExit));
  clearTimeout(timer);
  return { code, stdout, stderr };
}
