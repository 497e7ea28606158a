import { closeOnSignals, listen, runMain } from '../../platform/server.js';
import { buildTicketsApp } from './app.js';
import { readTicketSettings } from './settings.js';

/** npm run start:tickets */
runMain(async () => {
  const settings = readTicketSettings(process.env);
  const app = await buildTicketsApp(settings);
  closeOnSignals([app]);
  await listen(app, settings.host, settings.port);
});
