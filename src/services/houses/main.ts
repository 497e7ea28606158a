import { runMain, startServices } from '../../platform/server.js';
import { prepareHousesService } from './app.js';
import { readHouseSettings } from './settings.js';

/** npm run start:houses */
runMain(async () => startServices([await prepareHousesService(readHouseSettings(process.env))]));
