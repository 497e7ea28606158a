import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** conventions.md: an incoming X-Request-ID of 1 to 128 characters from [A-Za-z0-9._:-] is kept. */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function isAcceptableRequestId(value: unknown): value is string {
  return typeof value === 'string' && ACCEPTABLE_REQUEST_ID.test(value);
}

/** Fastify's genReqId: keep the client's id when well-formed, otherwise a new UUID v4. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return isAcceptableRequestId(incoming) ? incoming : randomUUID();
}
