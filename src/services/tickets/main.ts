import { runMain, startServices } from '../../platform/server.js';
import { prepareTicketsService } from './app.js';

/** npm run start:tickets */
runMain(async () => startServices([await prepareTicketsService(process.env)]));
