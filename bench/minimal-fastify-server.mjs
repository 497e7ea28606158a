import Fastify from 'fastify';

// A reference for the ticket benchmark: what Fastify itself costs. One POST route with a JSON body
// schema (the same limits as the ticket contract), answering the same JSON as the bare server; no
// hooks, no logging, no request ids, no API key: none of the platform's features.
const answer = { category: 'billing', priority: 1, confidence: 0.9, model_version: 'keywords-1.0' };
const app = Fastify({ logger: false });
app.post(
  '/v1/classify',
  {
    schema: {
      body: {
        type: 'object',
        required: ['subject'],
        additionalProperties: false,
        properties: { subject: { type: 'string', minLength: 1, maxLength: 120 }, body: { type: 'string', maxLength: 5000, default: '' } },
      },
    },
  },
  async () => answer,
);
app.get('/', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
