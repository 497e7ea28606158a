import { runMain, startServices } from '../../platform/server.js';
import { readTicketSettings } from './settings.js';

/**
 * npm run start:tickets. The settings are read before the service's modules are loaded, so that a
 * refused setting stops the start at once.
 */
runMain(async () => {
  const settings = readTicketSettings(process.env);
  const { prepareTicketsService } = await import('./app.js');
  return startServices([await prepareTicketsService(settings)]);
});
