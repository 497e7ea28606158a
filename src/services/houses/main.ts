import { runMain, startServices } from '../../platform/server.js';
import { prepareHousesService } from './app.js';

/** npm run start:houses */
runMain(async () => startServices([await prepareHousesService(process.env)]));
