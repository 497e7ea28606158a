import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { PlatformApp } from '../../../platform/platform-app.js';
import { PAGE_CSP } from '../../../platform/docs.js';
import { repositoryRoot } from '../../../shared/repository-root.js';
import type { BoroughOutlines } from '../borough-outlines.js';

/**
 * The pages of the service itself (docs/requests.md, "Dashboard page"):
 * - `/`: a small index linking the dashboard (when on) and the docs pages (when on);
 * - `/dashboard`: a page that calls the public API with a key the user types, its script and style
 *   files and the borough outlines from `src/services/requests/dashboard/` (no build step), and
 *   Chart.js from the `chart.js` package in node_modules. Nothing comes from a CDN, so the page works offline.
 * Every page answers with PAGE_CSP: this origin only, no inline script or style. The routes are
 * hidden from the OpenAPI description, which describes the API only.
 */

/** The folder of the dashboard's static files, relative to the repository root (works from src/ and dist/src/). */
export const DASHBOARD_FILES_FOLDER = 'src/services/requests/dashboard';

const HTML_TYPE = 'text/html; charset=utf-8';
const JAVASCRIPT_TYPE = 'text/javascript; charset=utf-8';
const CSS_TYPE = 'text/css; charset=utf-8';
const GEOJSON_TYPE = 'application/geo+json';

/** Page files change with the code: the browser asks again each time (ETag-less, small). */
const REVALIDATE = 'no-cache';
/** The charting library changes only with its pinned version in package.json. */
const ONE_DAY = 'public, max-age=86400';

interface PageFile {
  url: string;
  type: string;
  cacheControl: string;
  content: Buffer | string;
}

const require = createRequire(import.meta.url);

function chartLibraryPath(): string {
  // The package exports only its module entries; the UMD bundle sits beside the CommonJS one.
  return join(dirname(require.resolve('chart.js')), 'chart.umd.min.js');
}

/** The dashboard's files, read once at start: a missing file stops the start instead of a broken page. */
function readDashboardFiles(outlines: BoroughOutlines | null): PageFile[] {
  const folder = join(repositoryRoot(), DASHBOARD_FILES_FOLDER);
  const page = readFileSync(join(folder, 'dashboard.html'), 'utf8');
  return [
    { url: '/dashboard', type: HTML_TYPE, cacheControl: REVALIDATE, content: page },
    { url: '/dashboard/dashboard.js', type: JAVASCRIPT_TYPE, cacheControl: REVALIDATE, content: readFileSync(join(folder, 'dashboard.js')) },
    { url: '/dashboard/dashboard.css', type: CSS_TYPE, cacheControl: REVALIDATE, content: readFileSync(join(folder, 'dashboard.css')) },
    { url: '/dashboard/chart.umd.min.js', type: JAVASCRIPT_TYPE, cacheControl: ONE_DAY, content: readFileSync(chartLibraryPath()) },
    // The five boroughs' outlines drawn under the map, read from outside the sources (borough-outlines.ts).
    ...(outlines === null ? [] : [{ url: '/dashboard/boroughs.geojson', type: GEOJSON_TYPE, cacheControl: REVALIDATE, content: outlines.content }]),
  ];
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The index page at `/`: what the service is and where its pages are. */
export function indexPage(title: string, { showDashboard, showDocs }: { showDashboard: boolean; showDocs: boolean }): string {
  const links: [string, string][] = [];
  if (showDashboard) links.push(['/dashboard', 'Dashboard: daily numbers, complaint types, a plot of the requests and a table, with your API key']);
  if (showDocs) {
    links.push(['/docs', 'API reference with try-it (Swagger UI)']);
    links.push(['/redoc', 'API reference, read-only (ReDoc)']);
    links.push(['/openapi.json', 'OpenAPI 3.1 description']);
  }
  links.push(['/health', 'Liveness']);
  links.push(['/ready', 'Readiness: the database can be read']);
  const items = links.map(([href, text]) => `<li><a href="${href}">${escapeHtml(href)}</a>: ${escapeHtml(text)}</li>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>Read-only NYC 311 street-repair service requests. Every <code>/v1</code> path needs an <code>X-API-Key</code> header.</p>
<ul>
${items}
</ul>
</body>
</html>
`;
}

export interface ServicePagesOptions {
  title: string;
  showDashboard: boolean;
  showDocs: boolean;
  boroughOutlines: BoroughOutlines | null;
}

/** Registers `/` and, when on, `/dashboard` with its files. */
export function registerServicePages(app: PlatformApp, options: ServicePagesOptions): void {
  const files: PageFile[] = [{ url: '/', type: HTML_TYPE, cacheControl: REVALIDATE, content: indexPage(options.title, options) }];
  if (options.showDashboard) files.push(...readDashboardFiles(options.boroughOutlines));
  for (const file of files) {
    app.get(file.url, { schema: { hide: true } }, async (_request, reply) =>
      reply.type(file.type).header('Cache-Control', file.cacheControl).header('Content-Security-Policy', PAGE_CSP).send(file.content),
    );
  }
}
