import { existsSync } from 'node:fs';
import { closeOnSignals, listen, runMain } from '../../platform/server.js';
import { buildRequestsApp } from './app.js';
import { readRequestSettings } from './settings.js';
import { ensureDefaultSnapshot } from './default-snapshot.js';

/** npm run start:requests */
runMain(async () => {
  const settings = readRequestSettings(process.env);
  if (settings.database.kind === 'sqlite') {
    if (settings.database.isDefault) await ensureDefaultSnapshot(settings.database.path);
    else if (!existsSync(settings.database.path)) {
      process.stderr.write(`DATABASE_URL: ${settings.database.path} does not exist; /ready answers 503 until it does\n`);
    }
  }
  const app = await buildRequestsApp(settings);
  if (settings.generatedApiKey !== null) {
    // Printed once, on stdout, outside the per-request log lines.
    process.stdout.write(`API_KEY is not set: every /v1 path needs X-API-Key; the key for this run is ${settings.generatedApiKey}\n`);
  }
  closeOnSignals([app]);
  await listen(app, settings.host, settings.port);
});
