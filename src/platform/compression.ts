import compress from '@fastify/compress';
import { negotiate } from '@fastify/accept-negotiator';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { platformPlugin, type PlatformApp } from './platform-app.js';
import { ByteBoundedLru } from './byte-bounded-lru.js';
import { addVary, canonicalVary } from './vary.js';

/** Answers smaller than this are sent as they are: compressing them saves too little. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * Brotli quality: zlib's default (11) costs many times gzip's CPU per 1000-row page; 4 (the plugin's
 * recommended default) costs about what gzip does in one call, for about the same bytes. Through the
 * plugin's streaming path under load it costs more server CPU than gzip for barely fewer bytes, so
 * gzip is preferred when a client accepts both equally (bench/README.md, "Figures behind source comments").
 */
export const BROTLI_QUALITY = 4;

/** gzip level: zlib's default. Kept copies (below) make its cost a once-per-answer cost. */
export const GZIP_LEVEL = 6;

/**
 * Bytes of compressed answers kept per process (keys included), least recently used dropped first:
 * 32 MiB holds about 600 compressed pages of 1000 rows (52 KB each), i.e. every such page of the
 * synthetic snapshot in both encodings (bench/README.md, "Dashboard additions and formats").
 */
export const KEPT_COMPRESSED_BYTES = 32 * 1024 * 1024;

/** The media types whose answers are compressed (JSON, CSV, GeoJSON, HTML, JavaScript, CSS). */
const COMPRESSIBLE = /^(?:text\/|application\/(?:[a-z.+-]*\+)?json\b|application\/javascript\b)/;

const ENCODINGS = ['gzip', 'br'] as const;
type Encoding = (typeof ENCODINGS)[number];

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
export async function registerCompression(app: PlatformApp, keptBytes = KEPT_COMPRESSED_BYTES): Promise<KeptCompressedAnswers> {
  await app.register(compress, {
    // Preference order for equal qualities: gzip first (see BROTLI_QUALITY).
    encodings: [...ENCODINGS],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    globalDecompression: false,
    customTypes: COMPRESSIBLE,
    zlibOptions: { level: GZIP_LEVEL },
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
  });
  // An instance hook runs before the route-level onSend the plugin adds: a kept copy is sent as it is.
  const kept = new KeptCompressedAnswers(keptBytes);
  app.addHook('onSend', (request, reply, payload) => kept.answer(request, reply, payload));
  // Added after the plugin's own onSend of each route, so that it sees the chosen Content-Encoding.
  app.addHook('onRoute', (route) => {
    const hooks = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...hooks, tagEncodedRepresentation];
  });
  return kept;
}

/** gzip and brotli answers, Vary: Accept-Encoding and ETags per encoding (registerCompression). */
export const compressionPlugin = platformPlugin('compression', async (app) => {
  await registerCompression(app);
});

const compressWith: Record<Encoding, (body: Buffer) => Promise<Buffer>> = {
  gzip: (body) => promisify(gzip)(body, { level: GZIP_LEVEL }),
  br: (body) => promisify(brotliCompress)(body, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } }),
};

/**
 * Compressed copies of answers that carry a strong ETag (the requests service's frozen answers), kept
 * in a ByteBoundedLru keyed by encoding and ETag: a strong ETag names one representation, so the same
 * tag always has the same bytes. The first request of a tag and encoding compresses the body in one
 * call on libuv's thread pool (the event loop does not wait; requests of the same copy meanwhile wait
 * for that one compression); later ones send the kept copy. Streams (the export) and answers without
 * a strong ETag are left to the plugin, which compresses a stream as it flows.
 */
export class KeptCompressedAnswers {
  private readonly copies: ByteBoundedLru;
  private readonly pending = new Map<string, Promise<Buffer>>();

  constructor(maxBytes: number) {
    this.copies = new ByteBoundedLru(maxBytes);
  }

  async answer(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    // First the cheapest look: most API clients ask for no encoding, and then nothing else is read.
    if (request.headers['accept-encoding'] === undefined) return payload;
    const etag = reply.getHeader('ETag');
    if (typeof etag !== 'string' || !etag.startsWith('"') || reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    if (Buffer.byteLength(payload) < COMPRESSION_THRESHOLD_BYTES) return payload;
    const type = reply.getHeader('Content-Type');
    if (typeof type !== 'string' || !COMPRESSIBLE.test(type) || reply.getHeader('Content-Encoding') !== undefined) return payload;
    if (request.headers['x-no-compression'] !== undefined) return payload;
    const encoding = negotiatedEncoding(request.headers['accept-encoding']);
    if (encoding === undefined) return payload;
    const body = await this.compressed(`${encoding} ${etag}`, encoding, typeof payload === 'string' ? Buffer.from(payload) : payload);
    addVary(reply, 'Accept-Encoding');
    reply.header('Content-Encoding', encoding).header('Content-Length', body.length);
    return body;
  }

  private compressed(key: string, encoding: Encoding, payload: Buffer): Promise<Buffer> {
    const kept = this.copies.get(key);
    if (kept !== undefined) return Promise.resolve(kept);
    let running = this.pending.get(key);
    if (running === undefined) {
      running = compressWith[encoding](payload).then(
        (body) => {
          this.pending.delete(key);
          this.copies.set(key, body);
          return body;
        },
        (error: unknown) => {
          this.pending.delete(key);
          throw error;
        },
      );
      this.pending.set(key, running);
    }
    return running;
  }

  /** Bytes and copies kept (for tests and benchmarks). */
  stats(): { bytes: number; entries: number } {
    return this.copies.stats();
  }
}

/** The encoding the plugin would choose for this Accept-Encoding (its own negotiation: `*` and x-gzip mean gzip). */
function negotiatedEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  if (acceptEncoding === undefined) return undefined;
  const chosen = negotiate(acceptEncoding.toLowerCase().replace(/\*|x-gzip/gu, 'gzip'), [...ENCODINGS]);
  return chosen === 'gzip' || chosen === 'br' ? chosen : undefined;
}

/** A payload that would be compressed if the client asked (a stream: its size is not known). */
function isLarge(payload: unknown): boolean {
  if (typeof payload === 'string') return payload.length >= COMPRESSION_THRESHOLD_BYTES;
  if (Buffer.isBuffer(payload)) return payload.length >= COMPRESSION_THRESHOLD_BYTES;
  return payload !== null && payload !== undefined;
}

function tagEncodedRepresentation(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  done(null, encodedRepresentationPayload(reply, payload));
}

function encodedRepresentationPayload(reply: FastifyReply, payload: unknown): unknown {
  // The plugin (just before) writes `accept-encoding` its own way: one spelling of Vary (vary.ts).
  canonicalVary(reply);
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
