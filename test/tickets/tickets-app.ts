import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import type { Env } from '../../src/platform/setting-readers.js';
import { LogCapture } from '../support/http.js';

/** The ticket service built from environment settings, with its log lines captured. */
export async function startTickets(env: Env = {}) {
  const logs = new LogCapture();
  const app = await buildTicketsApp(readTicketSettings(env), { logStream: logs });
  await app.ready();
  return { app, logs };
}

export const KEY = 'test-key-tickets-01';
