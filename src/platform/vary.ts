import type { FastifyReply } from 'fastify';

/**
 * `Vary`, written one way everywhere: each header name once, in its canonical spelling (`Accept`,
 * `Accept-Encoding`, `Origin`: each word capitalised), joined by `, `, in the order added. Header names
 * are case-insensitive (RFC 9110 5.1), but a cache or a test comparing texts sees
 * `Accept, accept-encoding` and `Accept, Accept-Encoding` as two values. Every writer of Vary (CORS,
 * compression, the routes that negotiate a format) adds to it with addVary, never replaces it, so
 * that `Origin` survives a route's `Accept`; what a plugin wrote its own way (@fastify/compress
 * writes `accept-encoding`) is rewritten by canonicalVary before the answer goes out.
 */

/** `accept-encoding` -> `Accept-Encoding`. */
function canonicalName(name: string): string {
  return name
    .toLowerCase()
    .split('-')
    .map((word) => (word === '' ? word : `${word[0]?.toUpperCase() ?? ''}${word.slice(1)}`))
    .join('-');
}

/** The names of a Vary text, canonical, each once; `*` alone stands for all. */
function varyNames(text: string): string[] {
  const names: string[] = [];
  for (const part of text.split(',')) {
    const name = part.trim();
    if (name === '') continue;
    if (name === '*') return ['*'];
    const canonical = canonicalName(name);
    if (!names.includes(canonical)) names.push(canonical);
  }
  return names;
}

/**
 * The canonical text of a Vary value, kept per text met: Vary is written only by this code and its
 * plugins, so a handful of texts, and an answer costs one map look-up (a page's Vary is rewritten on
 * every answer). At most 64 are kept, in case.
 */
const canonicalTexts = new Map<string, string>();

function canonicalText(text: string): string {
  let canonical = canonicalTexts.get(text);
  if (canonical === undefined) {
    canonical = varyNames(text).join(', ');
    if (canonicalTexts.size < 64) canonicalTexts.set(text, canonical);
  }
  return canonical;
}

function textOf(value: unknown): string {
  return Array.isArray(value) ? value.join(', ') : typeof value === 'string' ? value : '';
}

/** Adds `name` to the answer's Vary (once, canonical). */
export function addVary(reply: FastifyReply, name: string): void {
  const current = reply.getHeader('Vary');
  const text = canonicalText(current === undefined ? name : `${textOf(current)}, ${name}`);
  if (text !== current) reply.header('Vary', text);
}

/** Rewrites the answer's Vary, if any, in the one spelling (each name once, canonical, `, `). */
export function canonicalVary(reply: FastifyReply): void {
  const current = reply.getHeader('Vary');
  if (current === undefined) return;
  const text = canonicalText(textOf(current));
  if (text !== current) reply.header('Vary', text);
}
