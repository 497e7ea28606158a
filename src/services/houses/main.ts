import { runMain, startServices } from '../../platform/server.js';
import { readHouseSettings } from './settings.js';

/**
 * npm run start:houses. The settings are read before the service's modules are loaded, so that a
 * refused setting stops the start at once.
 */
runMain(async () => {
  const settings = readHouseSettings(process.env);
  const { prepareHousesService } = await import('./app.js');
  return startServices([await prepareHousesService(settings)]);
});
