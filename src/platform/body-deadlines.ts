import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { writeRawErrorAndClose } from './client-errors.js';
import { announcesBody } from './http-protocol.js';
import { platformPlugin } from './platform-app.js';

/**
 * A request body must arrive completely within the time limit of the request's start, whatever the
 * method (the hostile-input decisions: a GET announcing 1 GB and trickling it was not cut off). Node's
 * requestTimeout cuts off slow headers, but a body trickled in a byte a second was not cut off (found
 * by bench/reliability.ts); after the limit the client gets 408 `request_timeout` and the connection
 * is closed (only closed when an answer was already sent: a GET is answered without its body). Every
 * request that announces a body is watched from onRequest until its body is complete, or its
 * connection closed; one sweep every 250 ms looks for the late ones, so a request costs a map entry,
 * not a timer and listeners of its own.
 */
class BodyDeadlines {
  private readonly pending = new Map<FastifyRequest, { deadline: number; reply: FastifyReply }>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {}

  /** onRequest hook. */
  readonly watch = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const raw = request.raw;
    // Fastify's inject (light-my-request) has no real socket to cut off.
    if (announcesBody(raw) && !raw.complete && typeof raw.socket.destroy === 'function') {
      this.pending.set(request, { deadline: Date.now() + this.timeoutMs, reply });
      this.sweeper ??= setInterval(() => this.cutOffLateBodies(), 250).unref();
    }
    done();
  };

  /** preValidation and onResponse hook: the watch ends once the body is in (not when the answer is). */
  readonly release = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (request.raw.complete) this.pending.delete(request);
    done();
  };

  /** onRequestAbort hook: the client went away. */
  readonly forget = (request: FastifyRequest, done: HookHandlerDoneFunction): void => {
    this.pending.delete(request);
    done();
  };

  /** onClose hook. */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.pending.clear();
  }

  private cutOffLateBodies(): void {
    const now = Date.now();
    for (const [request, { deadline, reply }] of this.pending) {
      const raw = request.raw;
      if (raw.complete || raw.socket.destroyed) {
        this.pending.delete(request);
      } else if (now >= deadline) {
        this.pending.delete(request);
        if (reply.raw.headersSent) {
          raw.socket.destroy();
          continue;
        }
        request.log.info({ method: request.method, path: request.url.split('?')[0], status: 408 }, 'request');
        writeRawErrorAndClose(raw.socket, 'request_timeout', request.id);
      }
    }
  }
}

/** The body deadlines' hooks: watched from onRequest until the body is in, the client gone or the app closed. */
export const bodyDeadlinesPlugin = platformPlugin<{ timeoutMs: number }>('body-deadlines', (app, { timeoutMs }) => {
  const bodyDeadlines = new BodyDeadlines(timeoutMs);
  app.addHook('onRequest', bodyDeadlines.watch);
  app.addHook('preValidation', bodyDeadlines.release);
  app.addHook('onResponse', bodyDeadlines.release);
  app.addHook('onRequestAbort', bodyDeadlines.forget);
  app.addHook('onClose', (_instance, done) => {
    bodyDeadlines.stop();
    done();
  });
});
