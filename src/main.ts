import { runMain, startServices } from './platform/server.js';
import type { Env } from './platform/settings.js';
import { prepareHousesService } from './services/houses/app.js';
import { prepareRequestsService } from './services/requests/app.js';
import { prepareTicketsService } from './services/tickets/app.js';

/**
 * npm start: every service, each on its own port (defaults 8001, 8002, 8003), from one process.
 * Each reads the same environment as its own start command, except PORT, which would give all three
 * the same port: TICKETS_PORT, HOUSES_PORT and REQUESTS_PORT set them here.
 */
function envWithPort(variable: string): Env {
  const { PORT: _shared, ...env } = process.env;
  const port = process.env[variable];
  return port === undefined ? env : { ...env, PORT: port };
}

runMain(async () =>
  startServices([
    await prepareTicketsService(envWithPort('TICKETS_PORT')),
    await prepareHousesService(envWithPort('HOUSES_PORT')),
    await prepareRequestsService(envWithPort('REQUESTS_PORT')),
  ]),
);
