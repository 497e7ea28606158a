import type { FastifyInstance } from 'fastify';
import { SettingsError } from './settings.js';

/**
 * Starting and stopping. A setting with an invalid value stops the start with one clear line naming
 * the variable (exit 1). SIGTERM (and SIGINT): stop accepting, finish the requests in flight, exit 0.
 */
export async function listen(app: FastifyInstance, host: string, port: number): Promise<string> {
  return app.listen({ host, port });
}

export function closeOnSignals(apps: readonly FastifyInstance[], exit: (code: number) => void = process.exit): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    for (const app of apps) app.log.info({ signal }, 'shutting down: finishing requests in flight');
    const results = await Promise.allSettled(apps.map((app) => app.close()));
    const failed = results.some((result) => result.status === 'rejected');
    exit(failed ? 1 : 0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/** A service ready to listen: what each start command, and `npm start` for all three, needs. */
export interface PreparedService {
  app: FastifyInstance;
  host: string;
  port: number;
}

/** Listens with every prepared service, and closes them all on SIGTERM/SIGINT. */
export async function startServices(services: readonly PreparedService[]): Promise<void> {
  closeOnSignals(services.map((service) => service.app));
  for (const service of services) await listen(service.app, service.host, service.port);
}

/** Runs a start function; a SettingsError becomes one line on stderr and exit code 1. */
export function runMain(start: () => Promise<void>): void {
  start().catch((error: unknown) => {
    if (error instanceof SettingsError) {
      process.stderr.write(`${error.message}\n`);
    } else {
      process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    process.exit(1);
  });
}
