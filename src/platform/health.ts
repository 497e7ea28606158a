import { Type } from 'typebox';
import type { PlatformApp } from './app.js';
import { ApiError, errorResponse } from './errors.js';

/**
 * GET /health (liveness: answers 200 whatever the state) and GET /ready (readiness: 200
 * {"status": "ready"}, or 503 with the service's unavailable code), the same in all three services.
 */
export interface Readiness {
  /** Resolves when the service can answer; throws (or rejects) an ApiError with its 503 when not. */
  check(): Promise<void> | void;
  /** The 503 answer's description in OpenAPI, e.g. "The classifier is unavailable (classifier_unavailable)". */
  unavailableDescription: string;
}

export function registerHealthRoutes(app: PlatformApp, readiness: Readiness): void {
  app.get(
    '/health',
    {
      schema: {
        tags: ['health'],
        operationId: 'getHealth',
        summary: 'Liveness',
        description: 'Answers 200 while the process runs, whatever the readiness state. Needs no key.',
        response: { 200: Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false, description: 'The process is alive', examples: [{ status: 'ok' }] }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/ready',
    {
      schema: {
        tags: ['health'],
        operationId: 'getReadiness',
        summary: 'Readiness',
        description: 'Answers 200 when the service can answer its requests, 503 with the error object otherwise. Needs no key.',
        response: {
          200: Type.Object({ status: Type.Literal('ready') }, { additionalProperties: false, description: 'The service is ready', examples: [{ status: 'ready' }] }),
          503: errorResponse(readiness.unavailableDescription),
        },
      },
    },
    async () => {
      await readiness.check();
      return { status: 'ready' as const };
    },
  );
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}
