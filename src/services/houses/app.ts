import { createServiceApp, type AppOptions } from '../../platform/app.js';
import type { PlatformApp } from '../../platform/platform-app.js';
import { gaugeReadOnScrape } from '../../platform/metrics.js';
import type { PreparedService } from '../../platform/server.js';
import { parseHouseModel, loadModelFile, logModelState, type ModelParser, type ModelState } from './model/index.js';
import { registerHouseRoutes } from './routes/index.js';
import { HOUSE_COMPONENTS } from './schemas.js';
import type { HouseSettings } from './settings.js';

export const HOUSES_OPENAPI = {
  title: 'House Price Estimator API',
  version: '0.1.0',
  description: [
    'Estimates the price of a house in King County (Washington, USA) from a description of the house, with a range meant to hold',
    '80 percent of sales, the model version and the date the prices are as of.',
    '',
    '**Not for lending, underwriting or insurance decisions about a person.** The estimate is a first indication only; every answer',
    'names the model version so that any estimate can be traced. Estimates of $1,000,000 or more are much less reliable.',
    '',
    'Decisions on points the contract leaves open: field bounds as stated on each field; estimate_usd is the model',
    'output rounded to whole dollars; range_usd = {low: round(estimate_usd x low_factor), high: round(estimate_usd x high_factor)};',
    'a warning is {code, fields, message} with codes rare_value and high_value; a batch with any invalid house answers',
    '422 invalid_request listing every offending path, and outside_model_area only when every house is otherwise valid;',
    'the model file is read and its SHA-256 checked once at start: without a usable model, estimates and the model card answer',
    '503 model_unavailable, /health 200 and /ready 503; the 401 code is `unauthorized`; a body over 64 KiB is 413 `body_too_large`',
    '(checked before validation); an unexpected failure is 500 `internal_error`.',
  ].join('\n'),
  tags: [
    { name: 'estimates', description: 'Price estimates for one house or a batch' },
    { name: 'model', description: 'The model card' },
    { name: 'health', description: 'Liveness and readiness' },
  ],
  usesApiKey: true,
};

export interface HousesAppOptions extends AppOptions {
  /** How the model file's bytes become a model (default: the model file format of the model file decision). */
  parseModel?: ModelParser;
}

/** Builds the house-price service; the model file is read and checked here, once. */
export async function buildHousesApp(settings: HouseSettings, options: HousesAppOptions = {}): Promise<PlatformApp> {
  const state: ModelState = loadModelFile(settings.model, options.parseModel ?? parseHouseModel);
  const app = await createServiceApp(
    {
      name: 'houses',
      openapi: HOUSES_OPENAPI,
      components: HOUSE_COMPONENTS,
      registerRoutes: (routes) => registerHouseRoutes(routes, state),
      registerMetrics: (registry) =>
        gaugeReadOnScrape(
          registry,
          { name: 'houses_model_loaded', help: '1 when the model file was loaded and verified at start, 0 when not (status says why)', labelNames: ['model_version', 'status'] },
          (gauge) => gauge.set({ model_version: state.status === 'loaded' ? state.model.version : '', status: state.status }, state.status === 'loaded' ? 1 : 0),
        ),
    },
    settings,
    options,
  );
  logModelState(app.log, state);
  // TreeSHAP's worker thread (model/shared-tree-shap.ts) stops with the service.
  app.addHook('onClose', async () => {
    if (state.status === 'loaded') await state.model.close();
  });
  return app;
}

/** The house-price service from its settings (read first, so that an invalid one stops the start before anything runs), ready to listen (npm run start:houses, npm start). */
export async function prepareHousesService(settings: HouseSettings): Promise<PreparedService> {
  return { app: await buildHousesApp(settings), host: settings.host, port: settings.port };
}
