import compress from '@fastify/compress';
import { constants } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformApp } from './app.js';

/** Answers smaller than this are sent as they are: compressing them saves too little. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * Brotli quality: zlib's default (11) costs tens of milliseconds per 1000-row page; 4 (the plugin's
 * recommended default) took 4.9 ms in one call against 7.2 ms for gzip (level 6) on a 391 KB page, 51
 * against 52 KB (bench/README.md). Through the plugin's streaming path under load it measured about
 * twice gzip's server CPU for 1% fewer bytes, so gzip is preferred when a client accepts both equally.
 */
export const BROTLI_QUALITY = 4;

/** The media types whose answers are compressed (JSON, CSV, GeoJSON, HTML, JavaScript, CSS). */
const COMPRESSIBLE = /^(?:text\/|application\/(?:[a-z.+-]*\+)?json\b|application\/javascript\b)/;

/**
 * gzip and brotli for answers above COMPRESSION_THRESHOLD_BYTES when the client accepts them
 * (`@fastify/compress`), in every service. Request bodies are never decompressed: the body limit
 * counts the bytes a client sends, and a compressed body could unfold far past it.
 *
 * Every compressible answer that carries an ETag or is over the threshold says `Vary: Accept-Encoding`
 * (also when it is sent as it is, so that a shared cache never hands a compressed copy to a client that
 * did not ask for it); a small answer without an ETag (a classification, an estimate, an error) is left
 * alone, as the plugin leaves it, so that it costs next to nothing. A strong ETag names
 * one representation (RFC 9110 8.8.3): a compressed answer's ETag gets the encoding inside the
 * quotes (`"tag"` becomes `"tag-gzip"` or `"tag-br"`), and `etagMatches` accepts either form.
 */
export async function registerCompression(app: PlatformApp): Promise<void> {
  await app.register(compress, {
    // Preference order for equal qualities: gzip first (see BROTLI_QUALITY).
    encodings: ['gzip', 'br'],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    globalDecompression: false,
    customTypes: COMPRESSIBLE,
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
  });
  // Added after the plugin's own onSend of each route, so that it sees the chosen Content-Encoding.
  app.addHook('onRoute', (route) => {
    const hooks = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...hooks, tagEncodedRepresentation];
  });
}

/** A payload that would be compressed if the client asked (a stream: its size is not known). */
function isLarge(payload: unknown): boolean {
  if (typeof payload === 'string') return payload.length >= COMPRESSION_THRESHOLD_BYTES;
  if (Buffer.isBuffer(payload)) return payload.length >= COMPRESSION_THRESHOLD_BYTES;
  return payload !== null && payload !== undefined;
}

async function tagEncodedRepresentation(_request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const etag = reply.getHeader('ETag');
  // The common case (a small answer that no cache revalidates, e.g. a classification) costs one look.
  if (etag === undefined && !isLarge(payload)) return payload;
  const type = reply.getHeader('Content-Type');
  // A 304 stands for the answer it revalidates: it varies the same way.
  if ((typeof type === 'string' && COMPRESSIBLE.test(type)) || reply.statusCode === 304) addVary(reply, 'Accept-Encoding');
  const encoding = reply.getHeader('Content-Encoding');
  if (typeof encoding === 'string' && encoding !== 'identity' && typeof etag === 'string' && etag.endsWith('"')) {
    reply.header('ETag', `${etag.slice(0, -1)}-${encoding}"`);
  }
  return payload;
}

function addVary(reply: FastifyReply, name: string): void {
  const current = reply.getHeader('Vary');
  const text = Array.isArray(current) ? current.join(', ') : typeof current === 'string' ? current : '';
  const names = text.split(',').map((part) => part.trim()).filter((part) => part !== '');
  if (names.some((part) => part === '*' || part.toLowerCase() === name.toLowerCase())) return;
  reply.header('Vary', [...names, name].join(', '));
}

const ENCODING_SUFFIX = /-(?:gzip|br)"$/;

/**
 * If-None-Match against an ETag of this platform: `*`, or a list of (possibly weak) tags compared
 * weakly (RFC 9110 13.1.2), where the tag of a compressed copy (`"tag-gzip"`) stands for the same
 * content. The matching tag as the client sent it (for the 304's ETag), or null.
 */
export function etagMatches(ifNoneMatch: string, etag: string): string | null {
  const value = ifNoneMatch.trim();
  if (value === '*') return etag;
  for (const raw of value.split(',')) {
    const tag = raw.trim().replace(/^W\//, '');
    if (tag === etag || tag.replace(ENCODING_SUFFIX, '"') === etag) return tag;
  }
  return null;
}
