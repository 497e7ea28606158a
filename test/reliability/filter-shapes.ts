import { boxCells } from '../../src/snapshot/index.js';

/**
 * Requests of distinct filter shapes (the hostile-input decisions; docs/reliability.md): the `i`-th,
 * for i below 2,080, differs from every other in the SQL text a service that wrote one placeholder per
 * value would prepare, on SQLite and on PostgreSQL alike: the map box touches `i % 65` cells (none
 * for 0; one walk per cell), four other filters are set or not (`i / 65`), and the descriptor and
 * council district lists hold 1 to 40 and 1 to 50 values. A page, a count or a facet in turn. The
 * values name no request of the snapshots: every answer is quick, and only the shapes vary.
 * Used by test/requests/filter-shapes*.test.ts and bench/reliability/filter-shapes.ts.
 */
export const DISTINCT_SHAPES = 65 * 32;

/** A box of `cells` map cells in one row (Lower Manhattan), as bbox text. */
function boxOf(cells: number): string {
  const west = -74.0;
  const east = west + 0.01 * (cells - 1) + 0.005;
  const box = `${west.toFixed(3)},40.701,${east.toFixed(3)},40.704`;
  const touched = boxCells({ minLongitude: west, minLatitude: 40.701, maxLongitude: east, maxLatitude: 40.704 });
  if (touched?.length !== cells) throw new Error(`the box ${box} touches ${touched?.length ?? 'too many'} cells, not ${cells}`);
  return box;
}

/** The path and query of the `i`-th request. */
export function filterShapeRequest(i: number): string {
  const cells = i % 65;
  const others = Math.floor(i / 65) % 32;
  const descriptors = 1 + (i % 40);
  const districts = 1 + (Math.floor(i / 40) % 50);
  const query = new URLSearchParams();
  for (let d = 1; d <= descriptors; d += 1) query.append('descriptor', `No such descriptor ${d}`);
  for (let d = 1; d <= districts; d += 1) query.append('council_district', String(1000 + d));
  if (cells > 0) query.set('bbox', boxOf(cells));
  if (others & 1) query.set('status', 'open');
  if (others & 2) for (const channel of ['phone', 'none']) query.append('channel', channel);
  if (others & 4) for (const borough of ['queens', 'bronx']) query.append('borough', borough);
  if (others & 8) query.set('created_from', '2025-02-01');
  if (others & 16) query.set('created_to', '2025-05-01T12:00:00');
  const route = ['/v1/service-requests?limit=20&', '/v1/service-requests/count?', '/v1/facets?field=status&'][i % 3] as string;
  return `${route}${query.toString()}`;
}
