import type { PlatformApp } from '../../src/platform/platform-app.js';
import { buildHousesApp } from '../../src/services/houses/app.js';
import { readHouseSettings } from '../../src/services/houses/settings.js';
import { buildRequestsApp } from '../../src/services/requests/app.js';
import { readRequestSettings } from '../../src/services/requests/settings.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { createSqliteFixture, type FixtureDatabase } from '../requests/support/fixture-database.js';
import { duringSuite } from './during-suite.js';

export const SERVICE_NAMES = ['tickets', 'houses', 'requests'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export interface RunningService {
  name: ServiceName;
  /** http://127.0.0.1:PORT */
  url: string;
  apiKey: string;
  app: PlatformApp;
}

/**
 * The three services listening on ephemeral ports of 127.0.0.1, each with an API key: tickets,
 * houses on the shipped model, requests on the small SQLite fixture snapshot. `close` stops them
 * and removes the fixture.
 */
export async function startThreeServices(): Promise<{ services: RunningService[]; close(): Promise<void> }> {
  const apiKey = 'generated-client-key';
  const fixture: FixtureDatabase = createSqliteFixture();
  const apps: Record<ServiceName, PlatformApp> = {
    tickets: await buildTicketsApp(readTicketSettings({ API_KEY: apiKey }), { logger: false }),
    houses: await buildHousesApp(readHouseSettings({ API_KEY: apiKey }), { logger: false }),
    requests: await buildRequestsApp(
      readRequestSettings({ API_KEY: apiKey, CURSOR_SECRET: 'generated-client-cursor-secret-0123456789', DATABASE_URL: fixture.databaseUrl }),
      { logger: false },
    ),
  };
  const services: RunningService[] = [];
  for (const name of SERVICE_NAMES) {
    const app = apps[name];
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    services.push({ name, url, apiKey, app });
  }
  return {
    services,
    async close() {
      await Promise.all(SERVICE_NAMES.map((name) => apps[name].close()));
      await fixture.drop();
    },
  };
}

/** The OpenAPI description a running service serves at /openapi.json. */
export async function servedDescription(service: RunningService): Promise<Record<string, unknown>> {
  const response = await fetch(`${service.url}/openapi.json`);
  if (response.status !== 200) throw new Error(`${service.name}: /openapi.json answered ${response.status}`);
  return (await response.json()) as Record<string, unknown>;
}

/** The three services running during the suite, and the OpenAPI description each serves, by name. */
export function servicesDuringSuite(): { services: RunningService[]; descriptions: Map<ServiceName, Record<string, unknown>> } {
  return duringSuite(
    async () => {
      const running = await startThreeServices();
      const descriptions = new Map<ServiceName, Record<string, unknown>>();
      for (const service of running.services) descriptions.set(service.name, await servedDescription(service));
      return { ...running, descriptions };
    },
    (running) => running.close(),
  );
}
