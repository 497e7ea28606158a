import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { basename } from 'node:path';
import { belongsElsewhere, type Tier } from './test-tiers.js';

/**
 * The fast tier's guard (installed by fast-tier-setup.ts when TEST_TIER=fast): a test of a plain
 * `*.test.ts` file that connects to the test PostgreSQL or Redis (their ports, from TEST_DATABASE_URL
 * and TEST_REDIS_URL or their defaults, or PostgreSQL's Unix socket), launches Chromium, runs Python
 * or starts any other process fails, with a message naming the suffix its file needs. The connection
 * fails as a refused one would (its socket is destroyed with that message), a process start throws
 * it, and each is also recorded, so that a test whose code swallows the error fails all the same
 * (fast-tier-setup.ts checks the record after every test). Connections to other ports (a test's
 * own servers on port 0, a closed port) and worker threads are the fast tier's and pass.
 */
const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const CHILD_PROCESS_STARTS = ['spawn', 'spawnSync', 'execFile', 'execFileSync', 'exec', 'execSync', 'fork'] as const;

interface Guard {
  violations: string[];
  remove(): void;
}

// On the global object: with `isolate: false` the files of a worker share one process, and this
// module may be evaluated again for each of them; the guard is installed once per process.
const GUARD = Symbol.for('city-services.fast-tier-guard');
type WithGuard = typeof globalThis & { [GUARD]?: Guard };

function portOf(url: string, fallback: number): number {
  try {
    const port = new URL(url).port;
    return port === '' ? fallback : Number(port);
  } catch {
    return fallback;
  }
}

/** The ports of the test servers: the given ones and the defaults. */
function serverPorts(): Map<number, string> {
  return new Map([
    [portOf(DEFAULT_DATABASE_URL, 5432), 'PostgreSQL'],
    [portOf(process.env.TEST_DATABASE_URL ?? DEFAULT_DATABASE_URL, 5432), 'PostgreSQL'],
    [portOf(DEFAULT_REDIS_URL, 6379), 'Redis'],
    [portOf(process.env.TEST_REDIS_URL ?? DEFAULT_REDIS_URL, 6379), 'Redis'],
  ]);
}

/** What a socket's connect arguments reach: `{ port, host }`, a path, or the normalized array of net.connect. */
function connectTarget(args: unknown[]): { port?: number; host?: string; path?: string } {
  const first: unknown = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === 'object' && first !== null) {
    const options = first as { port?: unknown; host?: unknown; path?: unknown };
    return {
      ...(options.port === undefined ? {} : { port: Number(options.port) }),
      ...(typeof options.host === 'string' ? { host: options.host } : {}),
      ...(typeof options.path === 'string' ? { path: options.path } : {}),
    };
  }
  if (typeof first === 'number') return { port: first, ...(typeof args[1] === 'string' ? { host: args[1] } : {}) };
  if (typeof first === 'string') return /^\d+$/.test(first) ? { port: Number(first) } : { path: first };
  return {};
}

/**
 * The tier of a process start, by the program's name (the first word of a shell command); none for
 * esbuild, which bundles the TypeScript modules that worker threads start from (src/shared/module-worker.ts).
 */
function tierOfProgram(start: (typeof CHILD_PROCESS_STARTS)[number], args: unknown[]): { tier: Tier; program: string } | null {
  const command = typeof args[0] === 'string' ? args[0] : String(args[0]);
  const program = start === 'exec' || start === 'execSync' ? (command.trim().split(/\s+/)[0] ?? command) : start === 'fork' ? process.execPath : command;
  const name = basename(program);
  if (name === 'esbuild') return null;
  if (/chrom(e|ium)|headless_shell/i.test(name)) return { tier: 'browser', program };
  if (/^python/.test(name)) return { tier: 'python', program };
  if (/^(redis-server|postgres|initdb|pg_ctl|pg_basebackup)$/.test(name)) return { tier: 'server', program };
  return { tier: 'process', program };
}

export function installFastTierGuard(): void {
  const global = globalThis as WithGuard;
  if (global[GUARD] !== undefined) return;
  const violations: string[] = [];
  const ports = serverPorts();

  const socket = net.Socket.prototype as unknown as { connect: (this: net.Socket, ...args: unknown[]) => net.Socket };
  const socketConnect = socket.connect;
  socket.connect = function guardedConnect(this: net.Socket, ...args: unknown[]): net.Socket {
    const { port, host, path } = connectTarget(args);
    const server = port === undefined ? (path?.includes('.s.PGSQL.') === true ? 'PostgreSQL' : undefined) : ports.get(port);
    if (server === undefined) return socketConnect.apply(this, args);
    const error = new Error(`${server} at ${path ?? `${host ?? 'localhost'}:${port}`}: ${belongsElsewhere('server')}`);
    violations.push(error.message);
    process.nextTick(() => this.destroy(error));
    return this;
  };

  const processStarts = childProcess as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originals = new Map(CHILD_PROCESS_STARTS.map((start) => [start, processStarts[start]]));
  for (const start of CHILD_PROCESS_STARTS) {
    const original = originals.get(start);
    processStarts[start] = function (this: unknown, ...args: unknown[]): unknown {
      const tiered = tierOfProgram(start, args);
      if (tiered === null) return original?.apply(this, args);
      const { tier, program } = tiered;
      const message = `${start} ${program}: ${belongsElsewhere(tier)}`;
      violations.push(message);
      throw new Error(message);
    };
  }
  // The named exports of `node:child_process` that ES modules import follow the module's object.
  syncBuiltinESMExports();

  global[GUARD] = {
    violations,
    remove() {
      socket.connect = socketConnect;
      for (const [start, original] of originals) if (original !== undefined) processStarts[start] = original;
      syncBuiltinESMExports();
      global[GUARD] = undefined;
    },
  };
}

/** Whether the guard is installed in this process. */
export function fastTierGuardInstalled(): boolean {
  return (globalThis as WithGuard)[GUARD] !== undefined;
}

/** Removes the guard (a test of the guard that installed it itself). */
export function removeFastTierGuard(): void {
  (globalThis as WithGuard)[GUARD]?.remove();
}

/** What the guard stopped since the last call, forgotten once read. */
export function takeFastTierViolations(): string[] {
  return (globalThis as WithGuard)[GUARD]?.violations.splice(0) ?? [];
}

/** Throws what the guard stopped since the last check: the end of every test of the fast tier. */
export function failOnFastTierViolations(): void {
  const violations = takeFastTierViolations();
  if (violations.length > 0) throw new Error(violations.join('\n'));
}
