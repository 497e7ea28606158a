import { Type } from 'typebox';
import type { PlatformApp } from './platform-app.js';
import { withinDeadline } from './deadline.js';
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

/**
 * /ready answers within this time: a check that has not finished by then (a database that does not
 * answer) is a 503 with the service's unavailable code. Probes (Kubernetes' default timeout is 1 s)
 * then see a replica that cannot answer as not ready, instead of waiting on it.
 */
export const READINESS_DEADLINE_MS = 500;

/**
 * The service's check with a deadline. One check runs at a time: the probes that arrive while it
 * runs share it (a hung database gets one more query per check, not one per probe); a check still
 * running past the deadline goes on in the background, bounded by the store's own deadlines.
 */
function checkWithDeadline(readiness: Readiness, deadlineMs: number): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => {
    if (running === undefined) {
      // Started in a microtask, so that a check that throws at once is forgotten like any other.
      const current = Promise.resolve().then(() => readiness.check());
      const forget = () => {
        if (running === current) running = undefined;
      };
      current.then(forget, forget);
      running = current;
    }
    return withinDeadline(running, deadlineMs, () => new ApiError(readiness.unavailableCode));
  };
}

export function registerHealthRoutes(app: PlatformApp, readiness: Readiness, deadlineMs = READINESS_DEADLINE_MS): void {
  const check = checkWithDeadline(readiness, deadlineMs);
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
      // A service still compiling its schemas after its start would answer slowly (deferred-compilation.ts).
      if (app.hasDecorator('deferredCompilation') && app.deferredCompilation.compiling) throw new ApiError(readiness.unavailableCode);
      try {
        await check();
      } catch (error) {
        throw error instanceof ApiError ? error : new ApiError(readiness.unavailableCode);
      }
      return { status: 'ready' as const };
    },
  );
}
