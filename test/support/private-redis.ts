import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';

/**
 * A redis-server of the test's own, on a free port, that the test may hang (SIGSTOP) and resume
 * (SIGCONT): never the shared one at :6379. No persistence; killed by `stop`.
 */
export interface PrivateRedis {
  url: string;
  /** A client of this server (for reading counters). */
  client: Redis;
  hang(): void;
  resume(): void;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const url = `redis://127.0.0.1:${port}`;
  // Commands wait in the client's queue until the server listens (it takes a few milliseconds).
  const client = new Redis(url, { retryStrategy: () => 50 });
  client.on('error', () => undefined);
  await client.ping();
  const signal = (name: NodeJS.Signals) => {
    if (child.exitCode === null) child.kill(name);
  };
  return {
    url,
    client,
    hang: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    async stop() {
      client.disconnect();
      signal('SIGCONT');
      signal('SIGKILL');
      await exited;
    },
  };
}
