import { runMain, startServices } from '../../platform/server.js';
import { readRequestSettings } from './settings.js';

/**
 * npm run start:requests. The settings are read before the service's modules are loaded, so that a
 * refused setting stops the start at once.
 */
runMain(async () => {
  const settings = readRequestSettings(process.env);
  const { prepareRequestsService } = await import('./app.js');
  return startServices([await prepareRequestsService(settings)]);
});
