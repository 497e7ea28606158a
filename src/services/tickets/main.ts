import { runMain, startServices } from '../../platform/server.js';
import { prepareTicketsService } from './app.js';
import { readTicketSettings } from './settings.js';

/** npm run start:tickets */
runMain(async () => startServices([await prepareTicketsService(readTicketSettings(process.env))]));
