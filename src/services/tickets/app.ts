import { createServiceApp, type AppOptions } from '../../platform/app.js';
import type { PlatformApp } from '../../platform/platform-app.js';
import { gaugeReadOnScrape } from '../../platform/metrics.js';
import type { PreparedService } from '../../platform/server.js';
import { KeywordClassifier } from './classifier.js';
import { registerTicketRoutes } from './routes/index.js';
import { KEYWORDS_1_0 } from './rule-sets/keywords-1.0.js';
import { TICKET_COMPONENTS } from './schemas.js';
import type { TicketSettings } from './settings.js';

export const TICKETS_OPENAPI = {
  title: 'Ticket Classifier API',
  version: '0.1.0',
  description: [
    'Assigns a category and a priority to a support ticket by keyword rules (model_version keywords-1.0).',
    '',
    'Decisions on points the contract leaves open: GET /v1/categories needs no key;',
    'the 401 code is `unauthorized`; an unexpected failure is 500 `internal_error`; a body over 64 KiB is',
    '413 `body_too_large`; a body that is not JSON by Content-Type is 415 `unsupported_media_type`;',
    'CLASSIFIER_MODE accepts only `unavailable`, `available` or unset.',
  ].join('\n'),
  tags: [
    { name: 'tickets', description: 'Classification and categories' },
    { name: 'health', description: 'Liveness and readiness' },
  ],
  usesApiKey: true,
};

export async function buildTicketsApp(settings: TicketSettings, options: AppOptions = {}): Promise<PlatformApp> {
  const classifier = new KeywordClassifier(KEYWORDS_1_0);
  return createServiceApp(
    {
      name: 'tickets',
      openapi: TICKETS_OPENAPI,
      components: TICKET_COMPONENTS,
      registerRoutes: (app) => registerTicketRoutes(app, classifier, settings.classifierMode),
      registerMetrics: (registry) =>
        gaugeReadOnScrape(
          registry,
          { name: 'tickets_classifier_available', help: '1 when the classifier answers, 0 when not (CLASSIFIER_MODE)', labelNames: ['model_version'] },
          (gauge) => gauge.set({ model_version: classifier.modelVersion }, settings.classifierMode === 'available' ? 1 : 0),
        ),
    },
    settings,
    options,
  );
}

/** The ticket service from its settings (read first, so that an invalid one stops the start before anything runs), ready to listen (npm run start:tickets, npm start). */
export async function prepareTicketsService(settings: TicketSettings): Promise<PreparedService> {
  return { app: await buildTicketsApp(settings), host: settings.host, port: settings.port };
}
