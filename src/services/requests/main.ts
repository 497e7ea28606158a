import { runMain, startServices } from '../../platform/server.js';
import { prepareRequestsService } from './app.js';

/** npm run start:requests */
runMain(async () => startServices([await prepareRequestsService(process.env)]));
