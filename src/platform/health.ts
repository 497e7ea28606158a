import { Type } from 'typebox';
import type { PlatformApp } from './app.js';
import { ApiError, type ErrorCode, errorResponses } from './error-registry.js';

/**
 * GET /health (liveness: answers 200 whatever the state) and GET /ready (readiness: 200
 * {"status": "ready"}, or 503 with the service's unavailable code), the same in all three services.
 */
export interface Readiness {
  /** Resolves when the service can answer; throws (or rejects) when not. */
  check(): Promise<void> | void;
  /** The service's 503 code (`classifier_unavailable`...): /ready answers it for any failure of check. */
  unavailableCode: ErrorCode;
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
    () => ({ status: 'ok' as const }),
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
          ...errorResponses(readiness.unavailableCode),
        },
      },
    },
    async () => {
      try {
        await readiness.check();
      } catch (error) {
        throw error instanceof ApiError ? error : new ApiError(readiness.unavailableCode);
      }
      return { status: 'ready' as const };
    },
  );
}
