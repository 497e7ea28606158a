import type { PlatformApp } from './platform/app.js';
import { closeOnSignals, listen, runMain } from './platform/server.js';
import { buildTicketsApp } from './services/tickets/app.js';
import { readTicketSettings } from './services/tickets/settings.js';

/**
 * npm start: every service, each on its own port (defaults 8001, 8002, 8003), from one process.
 * Each reads the same environment as its own start command, except PORT: use TICKETS_PORT,
 * HOUSES_PORT and REQUESTS_PORT here (PORT would give all three the same port).
 */
function withPort(variable: string): NodeJS.ProcessEnv {
  const { PORT: _ignored, ...env } = process.env;
  const port = process.env[variable];
  return port === undefined ? env : { ...env, PORT: port };
}

runMain(async () => {
  const started: { app: PlatformApp; host: string; port: number }[] = [];
  const tickets = readTicketSettings(withPort('TICKETS_PORT'));
  started.push({ app: await buildTicketsApp(tickets), host: tickets.host, port: tickets.port });
  closeOnSignals(started.map((service) => service.app));
  for (const service of started) await listen(service.app, service.host, service.port);
});
