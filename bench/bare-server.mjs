import { createServer } from 'node:http';

// The ceiling: a bare node:http server answering the same JSON as POST /v1/classify.
const answer = JSON.stringify({ category: 'billing', priority: 1, confidence: 0.9, model_version: 'keywords-1.0' });
const server = createServer((request, response) => {
  request.on('data', () => {});
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) });
    response.end(answer);
  });
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
