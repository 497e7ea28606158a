import type { FastifyInstance } from 'fastify';

/**
 * The line each service logs when it listens: Fastify's own `Server listening at <url>` (which the
 * start scripts and tests look for), followed by where its docs pages and metrics are. The service's
 * name is the line's `service` field, as on every log line.
 */
export interface StartLineParts {
  showDocs: boolean;
  metrics: boolean;
}

const startLines = new WeakMap<FastifyInstance, StartLineParts>();

export function rememberStartLine(app: FastifyInstance, parts: StartLineParts): void {
  startLines.set(app, parts);
}

export function startLineText(address: string, parts: StartLineParts): string {
  const docs = parts.showDocs
    ? `docs ${address}/docs and ${address}/redoc, OpenAPI ${address}/openapi.json`
    : 'docs off (SHOW_DOCS=false)';
  const metrics = parts.metrics ? `; metrics ${address}/metrics (METRICS_KEY)` : '';
  return `Server listening at ${address}; ${docs}${metrics}`;
}

/** The text Fastify logs for each address it listens on (its `listenTextResolver`). */
export function startLineFor(app: FastifyInstance): (address: string) => string {
  const parts = startLines.get(app) ?? { showDocs: false, metrics: false };
  return (address) => startLineText(address, parts);
}
