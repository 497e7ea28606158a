import { closeOnSignals, listen, runMain } from '../../platform/server.js';
import { buildHousesApp } from './app.js';
import { readHouseSettings } from './settings.js';

/** npm run start:houses */
runMain(async () => {
  const settings = readHouseSettings(process.env);
  const app = await buildHousesApp(settings);
  closeOnSignals([app]);
  await listen(app, settings.host, settings.port);
});
