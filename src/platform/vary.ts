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

/** The names of a Vary value (a string, a list, or nothing), canonical, each once; `*` alone stands for all. */
function varyNames(value: unknown): string[] {
  const text = Array.isArray(value) ? value.join(',') : typeof value === 'string' ? value : '';
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

/** Adds `name` to the answer's Vary (once, canonical). */
export function addVary(reply: FastifyReply, name: string): void {
  const current = reply.getHeader('Vary');
  // The common cases in one look: no Vary yet, or the name already there as written here.
  if (current === undefined) {
    reply.header('Vary', canonicalName(name));
    return;
  }
  const names = varyNames(current);
  const canonical = canonicalName(name);
  if (names[0] === '*' || names.includes(canonical)) {
    if (names.join(', ') !== current) reply.header('Vary', names.join(', '));
    return;
  }
  reply.header('Vary', [...names, canonical].join(', '));
}

/** Rewrites the answer's Vary, if any, in the one spelling (each name once, canonical, `, `). */
export function canonicalVary(reply: FastifyReply): void {
  const current = reply.getHeader('Vary');
  if (current === undefined) return;
  const text = varyNames(current).join(', ');
  if (text !== current) reply.header('Vary', text);
}
