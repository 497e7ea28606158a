import { existsSync } from 'node:fs';
import { SettingsError } from '../../platform/setting-readers.js';
import { createServiceApp, type AppOptions } from '../../platform/app.js';
import type { PlatformApp } from '../../platform/platform-app.js';
import type { PreparedService } from '../../platform/server.js';
import { ensureDefaultSnapshot } from './default-snapshot.js';
import { CursorCodec } from './cursor.js';
import { registerServicePages } from './routes/dashboard-pages.js';
import { DATA_DESCRIPTION, descriptionNotice } from './data-notice.js';
import { EtagCaching } from './answers/etag-caching.js';
import { registerServiceRequestMetrics } from './metrics.js';
import { PostgresServiceRequestStore } from './store/postgres-store.js';
import { registerServiceRequestRoutes } from './routes/index.js';
import { ServiceRequestTexts } from './answers/serialized-rows.js';
import { REQUEST_COMPONENTS } from './schemas.js';
import type { ServiceRequestStore } from './store/service-request-store.js';
import type { RequestSettings } from './settings.js';
import { SqliteServiceRequestStore } from './store/sqlite-store.js';

export const REQUESTS_OPENAPI = {
  title: 'Service Request Data API',
  version: '0.1.0',
  description: [
    'Read-only access to a frozen snapshot of street-repair service requests in the layout of NYC 311 (Department of',
    'Transportation, January to June 2025, cleaned; **synthetic by default**, see "Which data" below), page by page with',
    'keyset cursors, with daily numbers.',
    '',
    'Decisions on points the contract leaves open: `limit` defaults to 50, at most 1000;',
    'the 401 code is `unauthorized`; a non-integer id is 422 `invalid_request`; `/ready` answers 503',
    '`database_unavailable` when the database cannot be read, as does every /v1 path; answers carry an ETag and',
    '`Cache-Control: private, max-age=300`, and If-None-Match is answered 304.',
    '',
    'For dashboards: repeatable filters (any of the values), `none` for the requests without a borough, complaint type or',
    'channel, more filters (channel, council_district, incident_zip, descriptor, a bbox map box), a count, facets, CSV and GeoJSON',
    'pages, a streamed full export, and weekly and monthly numbers with a `complete` flag. Answers over 1 KB are sent with gzip or',
    'brotli when the client accepts them (`Vary: Accept-Encoding`; the ETag of a compressed answer ends in -gzip or -br inside',
    'its quotes, and either form is accepted in If-None-Match).',
    '',
    DATA_DESCRIPTION,
  ].join('\n'),
  tags: [
    { name: 'service-requests', description: 'Service requests, page by page, and their complaint types' },
    { name: 'statistics', description: 'Daily, weekly and monthly numbers and the description of the snapshot' },
    { name: 'health', description: 'Liveness and readiness' },
  ],
  usesApiKey: true,
};

/**
 * Bytes of row texts kept on PostgreSQL (some 45,000 rows): fewer than on SQLite (where the embedded
 * snapshot is kept whole), so that the process stays within its memory budget at any snapshot size; a
 * page of rows not kept costs one statement by id, which the page's keyset statement costs anyway.
 */
const POSTGRES_ROW_TEXT_BYTES = 16 * 1024 * 1024;

export interface RequestsAppOptions extends AppOptions {
  /** A store to serve instead of the one DATABASE_URL names (tests, bench). Closed with the app. */
  store?: ServiceRequestStore;
  /**
   * Whether `ready()` (and so `listen`) goes on before the store's warm-up ends, as the start command
   * does (start to listening does not grow with the snapshot's row columns). Default false: ready()
   * resolves with the store warm.
   */
  listenBeforeWarmUp?: boolean;
}

/**
 * The store DATABASE_URL names, within ROW_COLUMNS_MAX_MB. The SQLite file is opened on first use;
 * PostgreSQL connects on first use.
 */
export function openServiceRequestStore(settings: Pick<RequestSettings, 'database' | 'rowColumnsMaxBytes'>): ServiceRequestStore {
  const { database, rowColumnsMaxBytes } = settings;
  return database.kind === 'sqlite'
    ? new SqliteServiceRequestStore(database.path, { rowColumnsMaxBytes })
    : new PostgresServiceRequestStore({ url: database.url, schema: database.schema, rowColumnsMaxBytes });
}

/**
 * The API description, with the loaded snapshot named when it can be read at start (the reviewed copy
 * is made without a database, so it has the general text only).
 */
async function describeLoadedSnapshot(store: ServiceRequestStore): Promise<typeof REQUESTS_OPENAPI> {
  const dataset = await store.dataset().catch(() => null);
  if (dataset === null) return REQUESTS_OPENAPI;
  return { ...REQUESTS_OPENAPI, description: `${REQUESTS_OPENAPI.description}\n\n${descriptionNotice(dataset)}` };
}

export async function buildRequestsApp(settings: RequestSettings, options: RequestsAppOptions = {}): Promise<PlatformApp> {
  const store = options.store ?? openServiceRequestStore(settings);
  const app = await createServiceApp(
    {
      name: 'requests',
      openapi: await describeLoadedSnapshot(store),
      components: REQUEST_COMPONENTS,
      // Read-only: a preflight allows GET only.
      corsMethods: 'GET',
      registerMetrics: (registry) => registerServiceRequestMetrics(registry, store),
      registerRoutes: (service) => {
        registerServiceRequestRoutes(service, {
          store,
          texts: new ServiceRequestTexts(store, settings.database.kind === 'postgres' ? POSTGRES_ROW_TEXT_BYTES : undefined),
          cursors: new CursorCodec(settings.cursorSecrets),
          // The ETags follow the signing secret: next_cursor texts depend on it.
          caching: new EtagCaching(settings.cursorSecrets[0] as Buffer),
          exportMaxMs: settings.exportMaxMs,
        });
        registerServicePages(service, { title: REQUESTS_OPENAPI.title, showDashboard: settings.showDashboard, showDocs: settings.showDocs, boroughOutlines: settings.boroughOutlines });
      },
    },
    settings,
    options,
  );
  // The store warms up (its threads start, its row columns load) as the app gets ready. A started
  // service listens meanwhile and compiles its schemas: pages answer, and /ready waits for the warm-up
  // (the store's ping), so that traffic comes once a data request would answer at full speed. A store
  // that cannot be read yet answers 503 until it can, and its ping starts the warm-up again.
  app.addHook('onReady', async () => {
    const warmUp = store.warmUp().catch(() => undefined);
    if (options.listenBeforeWarmUp !== true) await warmUp;
  });
  app.addHook('onClose', async () => store.close());
  if (settings.cursorSecretGenerated) {
    app.log.warn(
      'CURSOR_SECRET is not set: cursors are signed with a random secret made at this start; they will not survive a restart or work on another replica (set CURSOR_SECRET, the same on every replica)',
    );
  }
  return app;
}

/**
 * A key made at start is shown once, on stderr, for the person starting the service: never on
 * stdout, where the JSON log lines go to log collectors.
 */
function printGeneratedApiKey(key: string): void {
  process.stderr.write(
    `[requests] API_KEY is not set: every /v1 path needs the X-API-Key header, and the key for this run is ${key}\n` +
      'Set API_KEY (several keys separated by commas) to use fixed keys that survive a restart.\n',
  );
}

/**
 * The service-request API from its settings (read first, so that an invalid one stops the start before anything runs), ready to listen (npm run start:requests, npm start):
 * builds the embedded snapshot when it is absent and prints a generated API key once.
 */
export async function prepareRequestsService(settings: RequestSettings): Promise<PreparedService> {
  if (settings.database.kind === 'sqlite') {
    if (settings.database.isDefault) await ensureDefaultSnapshot(settings.database.path);
    else if (!existsSync(settings.database.path)) {
      // Only the default path is built; another path names a file the operator means to serve.
      throw new SettingsError('DATABASE_URL', `the SQLite file ${settings.database.path} does not exist (unset DATABASE_URL to build and use the default snapshot)`);
    }
  }
  const store = openServiceRequestStore(settings);
  const app = await buildRequestsApp(settings, { store, listenBeforeWarmUp: true });
  if (settings.generatedApiKey !== null) printGeneratedApiKey(settings.generatedApiKey);
  return { app, host: settings.host, port: settings.port };
}
