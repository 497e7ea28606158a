import { runMain, startServices } from './platform/server.js';
import { SettingsError, type Env } from './platform/setting-readers.js';
import { readOptionalPort } from './platform/settings.js';
import { readHouseSettings } from './services/houses/settings.js';
import { readRequestSettings } from './services/requests/settings.js';
import { readTicketSettings } from './services/tickets/settings.js';

/**
 * npm start: every service, each on its own port (defaults 8001, 8002, 8003), from one process.
 * Each reads the same environment as its own start command, except PORT, which would give all three
 * the same port: TICKETS_PORT, HOUSES_PORT and REQUESTS_PORT set them here, checked under their own
 * names. Every setting of the three is read before any service is built, so that an invalid one
 * stops the start with its one line and nothing else.
 */
function envWithPort(variable: string): Env {
  const env = { ...process.env };
  delete env.PORT;
  const port = readOptionalPort(process.env, variable);
  return port === undefined ? env : { ...env, PORT: String(port) };
}

/** Two services cannot listen on one port (0, a free port each, excepted). */
function refuseSharedPorts(ports: readonly (readonly [variable: string, port: number])[]): void {
  ports.forEach(([variable, port], index) => {
    const earlier = ports.slice(0, index).find(([, other]) => other === port && port !== 0);
    if (earlier) throw new SettingsError(variable, `port ${port} is already the port of ${earlier[0]} (each service needs its own port)`);
  });
}

runMain(async () => {
  const tickets = readTicketSettings(envWithPort('TICKETS_PORT'));
  const houses = readHouseSettings(envWithPort('HOUSES_PORT'));
  const requests = readRequestSettings(envWithPort('REQUESTS_PORT'));
  refuseSharedPorts([
    ['TICKETS_PORT', tickets.port],
    ['HOUSES_PORT', houses.port],
    ['REQUESTS_PORT', requests.port],
  ]);
  // The services' modules are loaded once every setting is read: a refused one stops the start at once.
  const [{ prepareTicketsService }, { prepareHousesService }, { prepareRequestsService }] = await Promise.all([
    import('./services/tickets/app.js'),
    import('./services/houses/app.js'),
    import('./services/requests/app.js'),
  ]);
  await startServices([
    { ...(await prepareTicketsService(tickets)), portVariable: 'TICKETS_PORT' },
    { ...(await prepareHousesService(houses)), portVariable: 'HOUSES_PORT' },
    { ...(await prepareRequestsService(requests)), portVariable: 'REQUESTS_PORT' },
  ]);
});
