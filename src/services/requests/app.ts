import { existsSync } from 'node:fs';
import { createServiceApp, type AppOptions, type PlatformApp } from '../../platform/app.js';
import type { PreparedService } from '../../platform/server.js';
import type { Env } from '../../platform/settings.js';
import { ensureDefaultSnapshot } from './default-snapshot.js';
import { CursorCodec } from './cursor.js';
import { FrozenSnapshotCaching } from './frozen-caching.js';
import { PostgresServiceRequestStore } from './postgres-store.js';
import { registerServiceRequestRoutes } from './routes.js';
import { ServiceRequestTexts } from './row-texts.js';
import { ServiceRequest } from './schemas.js';
import type { ServiceRequestStore } from './service-request-store.js';
import { readRequestSettings, type DatabaseLocation, type RequestSettings } from './settings.js';
import { SqliteServiceRequestStore } from './sqlite-store.js';

export const REQUESTS_OPENAPI = {
  title: 'Service Request Data API',
  version: '0.1.0',
  description: [
    'Read-only access to a frozen snapshot of NYC 311 street-repair service requests (Department of Transportation,',
    'January to June 2025, cleaned), page by page with keyset cursors, with daily numbers.',
    '',
    'Decisions on points the contract leaves open (see docs/requests.md): `limit` defaults to 50, at most 1000;',
    'the 401 code is `unauthorized`; a non-integer id is 422 `invalid_request`; `/ready` answers 503',
    '`database_unavailable` when the database cannot be read, as does every /v1 path; answers carry an ETag and',
    '`Cache-Control: private, max-age=300`, and If-None-Match is answered 304.',
    '',
    'For dashboards: repeatable filters (any of the values), `none` for the requests without a borough, complaint type or',
    'channel, more filters (channel, council_district, incident_zip, descriptor, a bbox map box), a count, facets, CSV and GeoJSON',
    'pages, a streamed full export, and weekly and monthly numbers with a `complete` flag. Answers over 1 KB are sent with gzip or',
    'brotli when the client accepts them (`Vary: Accept-Encoding`; the ETag of a compressed answer ends in -gzip or -br inside',
    'its quotes, and either form is accepted in If-None-Match).',
  ].join('\n'),
  tags: [
    { name: 'service-requests', description: 'Service requests, page by page, and their complaint types' },
    { name: 'statistics', description: 'Daily, weekly and monthly numbers and the description of the snapshot' },
    { name: 'health', description: 'Liveness and readiness' },
  ],
  usesApiKey: true,
};

export interface RequestsAppOptions extends AppOptions {
  /** A store to serve instead of the one DATABASE_URL names (tests, bench). Closed with the app. */
  store?: ServiceRequestStore;
}

/** The store DATABASE_URL names. The SQLite file is opened on first use; PostgreSQL connects on first use. */
export function openServiceRequestStore(database: DatabaseLocation): ServiceRequestStore {
  return database.kind === 'sqlite'
    ? new SqliteServiceRequestStore(database.path)
    : new PostgresServiceRequestStore({ url: database.url, schema: database.schema });
}

export async function buildRequestsApp(settings: RequestSettings, options: RequestsAppOptions = {}): Promise<PlatformApp> {
  const store = options.store ?? openServiceRequestStore(settings.database);
  const app = await createServiceApp(
    {
      openapi: REQUESTS_OPENAPI,
      registerRoutes: (service) => {
        service.addSchema(ServiceRequest);
        registerServiceRequestRoutes(service, {
          store,
          texts: new ServiceRequestTexts(store),
          cursors: new CursorCodec(settings.cursorSecret),
          caching: new FrozenSnapshotCaching(settings.cursorSecret),
        });
      },
    },
    settings,
    options,
  );
  app.addHook('onClose', async () => store.close());
  return app;
}

/**
 * The service-request API from the environment, ready to listen (npm run start:requests, npm start):
 * builds the embedded snapshot when it is absent, reads the store's keyset index ahead of the first
 * request, and prints a generated API key once.
 */
export async function prepareRequestsService(env: Env): Promise<PreparedService> {
  const settings = readRequestSettings(env);
  if (settings.database.kind === 'sqlite') {
    if (settings.database.isDefault) await ensureDefaultSnapshot(settings.database.path);
    else if (!existsSync(settings.database.path)) {
      process.stderr.write(`DATABASE_URL: ${settings.database.path} does not exist; /ready answers 503 until it does\n`);
    }
  }
  const store = openServiceRequestStore(settings.database);
  await store.warmUp().catch(() => undefined); // a store that cannot be read answers 503 until it can
  const app = await buildRequestsApp(settings, { store });
  if (settings.generatedApiKey !== null) {
    // Printed once, on stdout, outside the per-request log lines.
    process.stdout.write(`API_KEY is not set: every /v1 path needs X-API-Key; the key for this run is ${settings.generatedApiKey}\n`);
  }
  return { app, host: settings.host, port: settings.port };
}
