import { runMain, startServices } from '../../platform/server.js';
import { prepareRequestsService } from './app.js';
import { readRequestSettings } from './settings.js';

/** npm run start:requests */
runMain(async () => startServices([await prepareRequestsService(readRequestSettings(process.env))]));
