/**
 * The borough outlines the dashboard draws under its points and cells (`GET /dashboard/boroughs.geojson`).
 * They are data from outside the repository (the public boundaries in `../shared/data/nyc311/boroughs/`,
 * with the README of how they were made), so the service reads them from a file at start, never from
 * its own sources: BOROUGH_OUTLINES_FILE names it; unset, the shared data folder beside the checkout is
 * used when it holds them, else the page draws no outline (and says so). A file named but unusable (absent,
 * unreadable, larger than 8 MiB, not a GeoJSON FeatureCollection) stops the start.
 */
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SettingsError, readText, type Env } from '../../platform/setting-readers.js';
import { repositoryRoot } from '../../shared/repository-root.js';

const VARIABLE = 'BOROUGH_OUTLINES_FILE';
/** Far above the public boundaries' 123 KB, far below what a page should fetch. */
const OUTLINES_MAX_BYTES = 8 * 1024 * 1024;

/** Where the outlines are when BOROUGH_OUTLINES_FILE is unset: the shared data folder beside the checkout. */
export function defaultOutlinesPath(): string {
  return join(repositoryRoot(), '..', 'shared', 'data', 'nyc311', 'boroughs', 'boroughs.geojson');
}

export interface BoroughOutlines {
  /** The file's bytes, served as they are. */
  content: Buffer;
  path: string;
}

function readOutlines(path: string): BoroughOutlines {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    throw new SettingsError(VARIABLE, `no readable file at ${path}`);
  }
  if (size > OUTLINES_MAX_BYTES) throw new SettingsError(VARIABLE, `the file is larger than ${OUTLINES_MAX_BYTES} bytes`);
  const content = readFileSync(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.toString('utf8'));
  } catch {
    throw new SettingsError(VARIABLE, 'the file is not JSON');
  }
  const collection = parsed as { type?: unknown; features?: unknown } | null;
  if (collection === null || typeof collection !== 'object' || collection.type !== 'FeatureCollection' || !Array.isArray(collection.features)) {
    throw new SettingsError(VARIABLE, 'the file is not a GeoJSON FeatureCollection');
  }
  return { content, path };
}

/** The outlines to serve, or null when none is set and the default place holds none. */
export function readBoroughOutlines(env: Env): BoroughOutlines | null {
  const named = readText(env, VARIABLE, { expected: 'the path of a GeoJSON FeatureCollection' });
  if (named !== undefined) return readOutlines(resolve(named));
  const fallback = defaultOutlinesPath();
  try {
    statSync(fallback);
  } catch {
    return null;
  }
  return readOutlines(fallback);
}
