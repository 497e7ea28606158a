import { expect } from 'vitest';
import type { StagedExport } from '../../../src/ingest/nyc311/clean-export.js';
import { stageExportText } from '../../../src/ingest/nyc311/parallel-staging.js';
import { generateSyntheticHistory } from '../../../src/ingest/nyc311/synthetic-export.js';

/**
 * The staging on worker threads against the staging on one thread (parallel-staging*.test.ts): the
 * same export, cut into small chunks so that its records are dealt to the workers in many pieces.
 */
export function chunksOf(text: string, size: number): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return chunks;
}

function outcome(staged: StagedExport): unknown {
  const rows = [...staged.rows()];
  const { rawRowsRead, latestTimestamp, candidates, firstCreatedAt, lastStagedCreatedAt, filtersApplied } = staged;
  return { rows, rules: staged.rules(), report: staged.report(), rawRowsRead, latestTimestamp, candidates, firstCreatedAt, lastStagedCreatedAt, filtersApplied };
}

/** The outcomes of staging `text` in chunks of `chunkSize` characters on `threads` workers and on one thread, in `stageDirectory`. */
export async function stagedBoth(stageDirectory: string, text: string, chunkSize: number, threads: number, applyFilters: boolean): Promise<[unknown, unknown]> {
  const options = { applyFilters, stageDirectory };
  const oneThread = outcome(await stageExportText(chunksOf(text, chunkSize), options));
  const onWorkers = outcome(await stageExportText(chunksOf(text, chunkSize), { ...options, threads }));
  return [onWorkers, oneThread];
}

/** A synthetic history's text: duplicates, closings before creation, repeats, spellings and placeholders planted. */
export function historyText(rows: number): string {
  return [...generateSyntheticHistory({ rows, fromYear: 2024, toYear: 2025, seed: 7 }).chunks].join('');
}

interface Check {
  name: string;
  check: () => Promise<void>;
}

/**
 * The checks of synthetic histories staged on threads: `pieces` requests in small pieces on 2 and 3
 * threads, and `layouts` requests written as the API JSON and the API CSV.
 */
export function historiesOnThreads(stageDirectory: string, rows: { pieces: number; layouts: number }): { pieces: Check; layouts: Check } {
  const count = (n: number) => n.toLocaleString('en-US');
  return {
    pieces: {
      name: `a synthetic history of ${count(rows.pieces)} requests in small pieces on 2 and 3 threads: the same requests in order and the same count for every rule`,
      async check() {
        const text = historyText(rows.pieces);
        for (const threads of [2, 3]) {
          const [onWorkers, oneThread] = await stagedBoth(stageDirectory, text, 4096 + threads, threads, false);
          expect(onWorkers).toEqual(oneThread);
        }
      },
    },
    layouts: {
      name: `a synthetic history of ${count(rows.layouts)} requests written as the API JSON and the API CSV: the same requests and counts on threads as on one`,
      async check() {
        for (const layout of ['api-json', 'api-csv'] as const) {
          const text = [...generateSyntheticHistory({ rows: rows.layouts, fromYear: 2024, toYear: 2025, seed: 7, layout }).chunks].join('');
          const [onWorkers, oneThread] = await stagedBoth(stageDirectory, text, 5003, 2, false);
          expect(onWorkers, layout).toEqual(oneThread);
        }
      },
    },
  };
}
