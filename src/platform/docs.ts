import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DocumentedOperations } from './openapi-components.js';
import { platformPlugin } from './platform-app.js';

/**
 * The reference pages and the OpenAPI description (conventions.md, "OpenAPI" and SHOW_DOCS).
 * - /openapi.json: OpenAPI 3.1, generated from the same TypeBox schemas that validate requests;
 * - /docs: Swagger UI with try-it, its assets served by @fastify/swagger-ui from this service;
 * - /redoc: ReDoc, from the `redoc` package's standalone bundle, also served from this service, with
 *   its `sanitize` option: the HTML of the descriptions (Markdown allows it) goes through its
 *   sanitizer, since the pages' policy allows inline scripts (Swagger UI sanitizes by itself).
 * Nothing is loaded from a CDN, so the pages work offline. With SHOW_DOCS=false none is registered.
 */
export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  tags: { name: string; description: string }[];
  /** Whether the service has routes protected by X-API-Key (adds the security scheme). */
  usesApiKey: boolean;
}

/**
 * A content security policy of this origin only: scripts, styles, images, fonts and connections from
 * the service itself, nothing from elsewhere. `forDocsBundles` adds what the docs pages' bundles
 * (Swagger UI, ReDoc) need: 'unsafe-inline' scripts and styles, blob: workers and images, data:
 * fonts. The service's own pages go without.
 */
export function sameOriginPolicy({ forDocsBundles }: { forDocsBundles: boolean }): string {
  const inline = forDocsBundles ? " 'unsafe-inline'" : '';
  const blob = forDocsBundles ? ' blob:' : '';
  return [
    "default-src 'self'",
    `script-src 'self'${inline}`,
    `style-src 'self'${inline}`,
    `img-src 'self' data:${blob}`,
    `font-src 'self'${forDocsBundles ? ' data:' : ''}`,
    `worker-src 'self'${blob}`,
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}

/** Content security policy of the docs pages: everything from this origin, nothing from elsewhere. */
export const DOCS_CSP = sameOriginPolicy({ forDocsBundles: true });

/** Content security policy of a service's own pages (the requests dashboard and index): no inline script or style. */
export const PAGE_CSP = sameOriginPolicy({ forDocsBundles: false });

/**
 * onSend hook of the whole service: every HTML page it serves carries a policy, whichever route or
 * plugin serves it (/docs, /redoc, and Swagger UI's static files such as oauth2-redirect.html get
 * DOCS_CSP); a page that set its own stricter policy (the dashboard's PAGE_CSP) keeps it.
 */
export function addPolicyToHtml(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  if (String(reply.getHeader('content-type') ?? '').startsWith('text/html') && !reply.hasHeader('Content-Security-Policy')) {
    reply.header('Content-Security-Policy', DOCS_CSP);
  }
  done(null, payload);
}

const require = createRequire(import.meta.url);
let redocBundle: Buffer | undefined;
function readRedocBundle(): Buffer {
  redocBundle ??= readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'));
  return redocBundle;
}

function redocPage(title: string): string {
  const safeTitle = title.replace(/[<>&"]/g, '');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${safeTitle} - ReDoc</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="/openapi.json" hide-download-button="false" sanitize="true"></redoc>
<script src="/redoc/redoc.standalone.js"></script>
</body>
</html>
`;
}

/** Registers the OpenAPI generator. Call before the service's routes so that they are collected. */
export async function registerOpenApi(app: FastifyInstance, info: OpenApiInfo, operations: DocumentedOperations): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: info.title, version: info.version, description: info.description },
      // Relative: the service that serves the description (Swagger UI's try-it calls the same origin).
      servers: [{ url: '/', description: 'This service, at the address the description was read from' }],
      tags: info.tags,
      components: info.usesApiKey
        ? { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } }
        : {},
    },
    transformObject: (document) => operations.complete('openapiObject' in document ? document.openapiObject : {}),
    refResolver: {
      buildLocalReference(json, _baseUri, _fragment, i) {
        return typeof json.$id === 'string' ? json.$id : `def-${i}`;
      },
    },
  });
}

/** Registers /openapi.json, /docs and /redoc. */
export async function registerDocsPages(app: FastifyInstance, info: OpenApiInfo): Promise<void> {
  app.get('/openapi.json', { schema: { hide: true }, config: { platformRoute: true } }, () => app.swagger());

  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    uiConfig: { tryItOutEnabled: true, deepLinking: true, displayRequestDuration: true },
    // Its pages get DOCS_CSP from addPolicyToHtml, like every HTML page of the service.
    staticCSP: false,
  });

  app.get('/redoc', { schema: { hide: true }, config: { platformRoute: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(redocPage(info.title)),
  );
  app.get('/redoc/redoc.standalone.js', { schema: { hide: true }, config: { platformRoute: true } }, async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').header('Cache-Control', 'public, max-age=86400').send(readRedocBundle()),
  );
}

/** onSend: the content security policy of every HTML page (addPolicyToHtml). */
export const htmlPolicyPlugin = platformPlugin('html-policy', (app) => {
  app.addHook('onSend', addPolicyToHtml);
});
