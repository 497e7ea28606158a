import { createHmac, hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * HTTP caching of a frozen snapshot: the answer to a GET depends only on the snapshot and the
 * request's path and query (and, through next_cursor, on the cursor key). Each 200 answer of /v1
 * gets a strong ETag and `Cache-Control: private, max-age=300` (private: the answers need a key);
 * a matching If-None-Match is answered 304 without a body and without reading the rows.
 */
export const CACHE_CONTROL = 'private, max-age=300';

export class FrozenSnapshotCaching {
  private readonly salt: string;

  constructor(cursorSecret: Buffer) {
    // Replicas sharing CURSOR_SECRET share ETags; with another key the next_cursor texts differ.
    this.salt = createHmac('sha256', cursorSecret).update('etag').digest('base64url').slice(0, 16);
  }

  etagOf(snapshotId: string, url: string): string {
    const digest = hash('sha256', `${this.salt}\n${snapshotId}\n${url}`, 'base64url').slice(0, 27);
    return `"${digest}"`;
  }

  /** Sets ETag and Cache-Control; true (and a 304 sent) when If-None-Match matches. */
  answerNotModified(request: FastifyRequest, reply: FastifyReply, snapshotId: string): boolean {
    const etag = this.etagOf(snapshotId, request.url);
    reply.header('ETag', etag).header('Cache-Control', CACHE_CONTROL);
    const ifNoneMatch = request.headers['if-none-match'];
    if (typeof ifNoneMatch !== 'string' || !matches(ifNoneMatch, etag)) return false;
    void reply.code(304).send();
    return true;
  }
}

/** If-None-Match: `*` or a list of (possibly weak) entity tags, compared weakly (RFC 9110 13.1.2). */
export function matches(ifNoneMatch: string, etag: string): boolean {
  const value = ifNoneMatch.trim();
  if (value === '*') return true;
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
