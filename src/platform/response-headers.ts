import { platformPlugin } from './platform-app.js';

/**
 * onRequest: the headers of every answer, set before anything can refuse the request: its id
 * (X-Request-ID, request-id.ts), and `nosniff` so that no browser reads a body as another type
 * than the one it is sent with.
 */
export const responseHeadersPlugin = platformPlugin('response-headers', (app) => {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-ID', request.id);
    reply.header('X-Content-Type-Options', 'nosniff');
    done();
  });
});
