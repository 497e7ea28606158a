/**
 * Builds a snapshot: reads an export (a real CSV file or the synthetic one), cleans it, computes
 * the daily numbers and complaint-type counts, and writes SQLite or loads PostgreSQL.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { cleanExportText, type CleanedExport } from './clean-export.js';
import { readFileTextChunks } from './csv-reader.js';
import { SNAPSHOT_PERIOD } from './cleaning-rules.js';
import { silentProgress, type ProgressReporter } from './progress-reporter.js';
import { computeComplaintTypeCounts, computeContentSha256, computeDailyStats } from './snapshot-aggregates.js';
import type { SnapshotContent } from './snapshot-content.js';
import { SNAPSHOT_SCHEMA_VERSION } from './snapshot-schema.js';
import { writePostgresSnapshot } from './postgres-snapshot-writer.js';
import { writeSqliteSnapshot } from './sqlite-snapshot-writer.js';
import type { SnapshotMeta, SnapshotSource } from './service-request.js';
import {
  SYNTHETIC_GENERATOR_VERSION,
  SYNTHETIC_RECORDS_PER_CHUNK,
  SYNTHETIC_SEED,
  SYNTHETIC_SNAPSHOT_DATE,
  SYNTHETIC_SOURCE_DESCRIPTION,
  type SyntheticExportCounts,
  generateSyntheticExport,
  syntheticExportFileName,
} from './synthetic-export.js';

export type SnapshotInput = { kind: 'file'; path: string } | { kind: 'synthetic'; seed?: number };
export type SnapshotOutput = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; schema?: string };

export interface PrepareSnapshotOptions {
  /** Apply the DOT and period filters (default true). */
  applyFilters?: boolean;
  /** `YYYY-MM-DD`; default: synthetic 2025-07-01, file: the date of its latest Created or Closed Date. */
  snapshotDate?: string;
  progress?: ProgressReporter;
}

export interface PreparedSnapshot {
  content: SnapshotContent;
  cleaned: CleanedExport;
  /** Synthetic input only: what the generator put in the export. */
  syntheticCounts: SyntheticExportCounts | null;
  /** generateMs: building the synthetic export's text (0 for a file); the rest is ingestion. */
  timings: { generateMs: number; readAndCleanMs: number; aggregateMs: number };
}

/** Read, clean and aggregate an export into what a writer stores. */
export async function prepareSnapshot(input: SnapshotInput, options: PrepareSnapshotOptions = {}): Promise<PreparedSnapshot> {
  const progress = options.progress ?? silentProgress;
  const applyFilters = options.applyFilters ?? true;
  const started = performance.now();
  const hash = createHash('sha256');
  let cleaned: CleanedExport;
  let source: Omit<SnapshotSource, 'layout'>;
  let syntheticCounts: SyntheticExportCounts | null = null;
  let generateMs = 0;

  if (input.kind === 'synthetic') {
    const seed = input.seed ?? SYNTHETIC_SEED;
    const generated = generateSyntheticExport(seed);
    syntheticCounts = generated.counts;
    progress.phase('generating synthetic export (records)', generated.counts.records);
    const chunks: string[] = [];
    for (const chunk of generated.chunks) {
      hash.update(chunk);
      chunks.push(chunk);
      progress.update((chunks.length - 1) * SYNTHETIC_RECORDS_PER_CHUNK);
    }
    generateMs = performance.now() - started;
    progress.phase('reading and cleaning (records)', generated.counts.records);
    cleaned = await cleanExportText(chunks, {
      applyFilters,
      onRecords: (n) => progress.update(n),
    });
    source = {
      kind: 'synthetic',
      description: `${SYNTHETIC_SOURCE_DESCRIPTION} (seed ${seed}, generator ${SYNTHETIC_GENERATOR_VERSION})`,
      dataset: 'erm2-nwe9',
      file_name: syntheticExportFileName(seed),
      sha256: '',
      seed,
      generator_version: SYNTHETIC_GENERATOR_VERSION,
    };
  } else {
    const size = statSync(input.path).size;
    progress.phase(`reading and cleaning ${basename(input.path)} (bytes)`, size);
    cleaned = await cleanExportText(readFileTextChunks(input.path, { hash, onBytes: (n) => progress.update(n) }), { applyFilters });
    source = {
      kind: 'file',
      description: `NYC Open Data 311 Service Requests (erm2-nwe9) export ${basename(input.path)}`,
      dataset: 'erm2-nwe9',
      file_name: basename(input.path),
      sha256: '',
      seed: null,
      generator_version: null,
    };
  }
  const sourceSha256 = hash.digest('hex');
  const readAndCleanMs = performance.now() - started - generateMs;

  const aggregateStarted = performance.now();
  progress.phase('computing daily numbers');
  const rows = cleaned.rows;
  const first = rows[0];
  const last = rows[rows.length - 1];
  const snapshotDate =
    options.snapshotDate ??
    (input.kind === 'synthetic' ? SYNTHETIC_SNAPSHOT_DATE : (cleaned.latestTimestamp ?? new Date().toISOString()).slice(0, 10));
  const period = applyFilters
    ? { start: SNAPSHOT_PERIOD.start, end: SNAPSHOT_PERIOD.end }
    : {
        start: first ? first.created_at.slice(0, 10) : snapshotDate,
        end: last ? last.created_at.slice(0, 10) : snapshotDate,
      };
  const dailyStats = computeDailyStats(rows, period.start, period.end);
  const complaintTypeCounts = computeComplaintTypeCounts(rows);
  const contentSha256 = computeContentSha256(rows, cleaned.rules, {
    snapshot_date: snapshotDate,
    period_start: period.start,
    period_end: period.end,
    source_sha256: sourceSha256,
  });
  const meta: SnapshotMeta = {
    snapshot_id: contentSha256.slice(0, 16),
    content_sha256: contentSha256,
    schema_version: SNAPSHOT_SCHEMA_VERSION,
    source: { ...source, sha256: sourceSha256, layout: cleaned.layout.layout },
    snapshot_date: snapshotDate,
    row_count: rows.length,
    raw_rows_read: cleaned.rawRowsRead,
    created_at_min: first?.created_at ?? null,
    created_at_max: last?.created_at ?? null,
    period_start: period.start,
    period_end: period.end,
    filters_applied: applyFilters,
    cleaning_rules: cleaned.rules,
    built_at: new Date().toISOString(),
  };
  return {
    content: { rows, dailyStats, complaintTypeCounts, meta },
    cleaned,
    syntheticCounts,
    timings: { generateMs, readAndCleanMs, aggregateMs: performance.now() - aggregateStarted },
  };
}

/** Store prepared content in SQLite or PostgreSQL. */
export async function writeSnapshot(output: SnapshotOutput, content: SnapshotContent, progress: ProgressReporter = silentProgress): Promise<void> {
  progress.phase(output.kind === 'sqlite' ? 'writing SQLite (rows)' : 'loading PostgreSQL (rows)', content.rows.length);
  if (output.kind === 'sqlite') {
    writeSqliteSnapshot(output.path, content, (n) => progress.update(n));
  } else {
    await writePostgresSnapshot(output.url, content, {
      ...(output.schema !== undefined ? { schema: output.schema } : {}),
      onProgress: (n) => progress.update(n),
    });
  }
}

export interface BuildSnapshotResult {
  meta: SnapshotMeta;
  syntheticCounts: SyntheticExportCounts | null;
  /** ingestMs: read, clean, aggregate and write (everything but generateMs). */
  timings: { generateMs: number; readAndCleanMs: number; aggregateMs: number; writeMs: number; ingestMs: number; totalMs: number };
}

/** Read, clean, aggregate and store: the whole snapshot command. */
export async function buildSnapshot(
  input: SnapshotInput,
  output: SnapshotOutput,
  options: PrepareSnapshotOptions = {},
): Promise<BuildSnapshotResult> {
  const started = performance.now();
  const prepared = await prepareSnapshot(input, options);
  const writeStarted = performance.now();
  await writeSnapshot(output, prepared.content, options.progress);
  const writeMs = performance.now() - writeStarted;
  const totalMs = performance.now() - started;
  return {
    meta: prepared.content.meta,
    syntheticCounts: prepared.syntheticCounts,
    timings: { ...prepared.timings, writeMs, ingestMs: totalMs - prepared.timings.generateMs, totalMs },
  };
}
