import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Cutting an answer that runs too long (an export past its time bound, anything still open when the
 * shutdown grace is over). The connection is destroyed: a chunked answer then ends without its
 * terminating zero-length chunk (and a sized one short of its Content-Length), so the client sees
 * the answer is incomplete; a clean end would pass a cut file off as whole.
 */

/** Cuts this reply's answer `maxMs` after now, unless it has ended by then. */
export function cutAnswerAfter(reply: FastifyReply, maxMs: number): void {
  const response = reply.raw;
  const timer = setTimeout(() => {
    if (response.writableFinished) return;
    reply.log.warn({ max_seconds: maxMs / 1_000 }, 'answer cut: still running at its time bound');
    response.destroy();
  }, maxMs);
  timer.unref();
  response.once('close', () => clearTimeout(timer));
}

/** Cuts every connection still open on the app's server (answers in progress included). */
export function cutOpenConnections(app: FastifyInstance): void {
  app.log.warn('shutdown grace over: cutting the connections still open');
  app.server.closeAllConnections();
}
