import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * podman for the container tests (run by scripts/test-containers.sh, which builds the images and
 * names deploy/podman/containers.conf in CONTAINERS_CONF).
 */
const run = promisify(execFile);

/** The image under test (scripts/test-containers.sh builds it). */
export const IMAGE = process.env.IMAGE ?? 'localhost/city-services:test';

/** podman with these arguments; its stdout, trimmed. Rejects on a non-zero exit. */
export async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/** The exit code of podman with these arguments (0 when it succeeds). */
export async function podmanStatus(...args: string[]): Promise<number> {
  try {
    await podman(...args);
    return 0;
  } catch (error) {
    return (error as { code?: number }).code ?? 1;
  }
}

/** The loopback URL where the container's `port` is published. */
export async function publishedUrl(container: string, port: number): Promise<string> {
  const address = (await podman('port', container, `${port}/tcp`)).split('\n')[0] ?? '';
  return `http://${address.replace('0.0.0.0', '127.0.0.1')}`;
}

/** Waits until `url` answers 200; the milliseconds it took. */
export async function waitFor200(url: string, timeoutMs = 60_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (response.status === 200) return performance.now() - started;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > timeoutMs) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Removes containers, whatever their state. */
export async function removeContainers(...names: string[]): Promise<void> {
  if (names.length > 0) await podmanStatus('rm', '--force', '--time', '0', ...names);
}
