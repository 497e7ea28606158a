import type { FastifyInstance } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import { cutOpenConnections } from './long-answers.js';
import { SettingsError, quoted } from './setting-readers.js';
import { SHUTDOWN_GRACE_DEFAULT_MS } from './settings.js';
import { startLineFor } from './start-line.js';

/**
 * Starting and stopping. A setting with an invalid value stops the start with one clear line naming
 * the variable (exit 1). SIGTERM (and SIGINT): stop accepting, finish the requests in flight within
 * the grace (SHUTDOWN_GRACE_SECONDS), cut what is still open, exit 0.
 */

/**
 * After the grace the connections still open are cut; if the services have still not closed this
 * long after that (a close hook waiting on a dependency), the process exits anyway, with code 1.
 */
export const SHUTDOWN_EXIT_MARGIN_MS = 2_000;

declare module 'fastify' {
  interface FastifyInstance {
    /** SHUTDOWN_GRACE_SECONDS of this service, in milliseconds. */
    shutdownGraceMs: number;
  }
}

/**
 * How long a stopping service keeps its open keep-alive connections before closing the idle ones.
 * A client in a request loop has written its next request onto its connection by then; the grace
 * lets the service read it and answer it (with `Connection: close`) instead of resetting it unread.
 */
export const DRAIN_GRACE_MS = 1_000;

function closeAfterAnswer(_request: IncomingMessage, response: ServerResponse): void {
  response.setHeader('Connection', 'close');
}

/**
 * First half of the shutdown: no new connection is accepted (the listening socket is closed), every
 * request read from now on is answered normally with `Connection: close`, so each open connection
 * closes after its next answer. Resolves when no connection is left, or after `graceMs`; then
 * `app.close()` closes the connections still idle and waits for the requests in flight.
 * Node's own `server.close()` would close idle keep-alive connections at once: a request already
 * written by a client but not read yet by the service is then lost to a connection reset.
 */
export async function drain(app: FastifyInstance, graceMs = DRAIN_GRACE_MS): Promise<void> {
  const server = app.server;
  if (!server.listening) return;
  server.prependListener('request', closeAfterAnswer);
  await new Promise<void>((resolveDrain) => {
    const timer = setTimeout(resolveDrain, graceMs);
    // net.Server#close: stop listening; the callback runs once every connection has ended.
    NetServer.prototype.close.call(server, () => {
      clearTimeout(timer);
      resolveDrain();
    });
  });
}
/**
 * Listens on HOST and PORT. A value the system refuses is a setting with an invalid value too: a
 * host that is not an address of this machine, or does not resolve, and a port in use or needing
 * privileges stop the start with `Invalid setting HOST: ...` or `Invalid setting PORT: ...`
 * (`portVariable`: TICKETS_PORT... under npm start). Other failures keep their own message.
 */
export async function listen(app: FastifyInstance, host: string, port: number, portVariable = 'PORT'): Promise<string> {
  try {
    return await app.listen({ host, port, listenTextResolver: startLineFor(app) });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') {
      throw new SettingsError('HOST', `${quoted(host)} is not an address of this machine, or does not resolve (${code})`);
    }
    if (code === 'EADDRINUSE') throw new SettingsError(portVariable, `port ${port} is already in use on ${host}`);
    if (code === 'EACCES') throw new SettingsError(portVariable, `port ${port} needs privileges this process does not have (use a port over 1023)`);
    throw error;
  }
}

/**
 * SIGTERM and SIGINT: (1) drain: no new connection, requests on open connections answered with
 * `Connection: close` (at most DRAIN_GRACE_MS, and never past the grace); (2) Fastify's close: what
 * is in flight finishes; (3) at the end of the grace (the largest of the services', from the
 * signal), every connection still open is cut (long exports end without their last chunk); (4) exit 0
 * once closed, or 1 when a close failed or was still not done SHUTDOWN_EXIT_MARGIN_MS after the cut.
 */
export function closeOnSignals(apps: readonly FastifyInstance[], exit: (code: number) => void = (code) => process.exit(code)): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    const graceMs = Math.max(0, ...apps.map((app) => (app.hasDecorator('shutdownGraceMs') ? app.shutdownGraceMs : SHUTDOWN_GRACE_DEFAULT_MS)));
    for (const app of apps) app.log.info({ signal, grace_seconds: graceMs / 1_000 }, 'shutting down: finishing requests in flight');
    const cut = setTimeout(() => {
      for (const app of apps) cutOpenConnections(app);
    }, graceMs);
    const giveUp = setTimeout(() => {
      for (const app of apps) app.log.error('shutdown: still not closed after the connections were cut; exiting');
      exit(1);
    }, graceMs + SHUTDOWN_EXIT_MARGIN_MS);
    const results = await Promise.allSettled(apps.map(async (app) => {
      await drain(app, Math.min(DRAIN_GRACE_MS, graceMs));
      await app.close();
    }));
    clearTimeout(cut);
    clearTimeout(giveUp);
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
  /** The setting that gave the port, named when the port cannot be used (default PORT). */
  portVariable?: string;
}

/**
 * Listens with every prepared service, and closes them all on SIGTERM/SIGINT; then compiles the
 * schemas left for after listening, in small steps between which the services answer.
 */
export async function startServices(services: readonly PreparedService[]): Promise<void> {
  closeOnSignals(services.map((service) => service.app));
  // Not ready until the schemas are compiled (the loop below).
  for (const service of services) if (service.app.hasDecorator('deferredCompilation')) service.app.deferredCompilation.schedule();
  for (const service of services) await listen(service.app, service.host, service.port, service.portVariable);
  // The schemas not compiled yet, one per turn of the event loop (a request compiles its own on demand).
  void (async () => {
    for (const service of services) {
      if (service.app.hasDecorator('deferredCompilation')) await service.app.deferredCompilation.compilePending();
    }
  })();
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
