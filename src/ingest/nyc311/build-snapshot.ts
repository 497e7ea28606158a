/**
 * Builds a snapshot: reads an export (a real CSV file or the synthetic one), cleans it, computes
 * the daily numbers and complaint-type counts, and writes SQLite or loads PostgreSQL.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import type { CleanedExport, ExportReport, StagedExport } from './clean-export.js';
import { UnreadableExportError, tooManyMalformed } from './export-summary.js';
import { columnLabel } from './export-columns.js';
import { stageExportText } from './parallel-staging.js';
import { readFileTextChunks } from './csv-reader.js';
import { SNAPSHOT_PERIOD } from './cleaning-rules.js';
import { silentProgress, type ProgressReporter } from './progress-reporter.js';
import { ContentHasher, SnapshotAggregator } from '../../snapshot/snapshot-aggregates.js';
import { type SnapshotContent, type SnapshotOutput, type SnapshotStream, type SnapshotSummaries, streamOf } from './snapshot-content.js';
import { SNAPSHOT_SCHEMA_VERSION } from '../../snapshot/snapshot-schema.js';
import { writePostgresSnapshot } from './postgres-snapshot-writer.js';
import { writeSqliteSnapshot } from './sqlite-snapshot-writer.js';
import { writeSnapshotOnThread } from './snapshot-writer-thread.js';
import type { ServiceRequest, SnapshotMeta, SnapshotSource } from '../../snapshot/service-request.js';
import {
  SYNTHETIC_GENERATOR_VERSION,
  SYNTHETIC_SEED,
  SYNTHETIC_SNAPSHOT_DATE,
  SYNTHETIC_SOURCE_DESCRIPTION,
  type SyntheticExportCounts,
  type SyntheticHistoryOptions,
  generateSyntheticExport,
  generateSyntheticHistory,
  syntheticExportFileName,
  syntheticHistoryFileName,
} from './synthetic-export.js';

/** `history`: a synthetic history of that size (generateSyntheticHistory) instead of the synthetic export. */
export type SnapshotInput =
  | { kind: 'file'; path: string }
  | { kind: 'synthetic'; seed?: number; history?: Omit<SyntheticHistoryOptions, 'seed'> };
export type { SnapshotOutput } from './snapshot-content.js';

export interface PrepareSnapshotOptions {
  /** Apply the DOT and period filters (default true). */
  applyFilters?: boolean;
  /** `YYYY-MM-DD`; default: synthetic 2025-07-01, file: the date of its latest Created or Closed Date. */
  snapshotDate?: string;
  progress?: ProgressReporter;
  /** Where the temporary staging file goes (default: the system's temporary directory). */
  stageDirectory?: string;
  /**
   * Worker threads: `threads` parse and clean the export, and one more writes the snapshot (default:
   * threadsFor the export's size; 0: the command's own thread does everything).
   */
  threads?: number;
  /**
   * Go on when more than 1% of the records are malformed, leaving them out (default false: such an
   * export is refused with UnreadableExportError before anything is written).
   */
  allowMalformed?: boolean;
}

/** An export from this size on is read on worker threads: below it, starting them costs more than they save. */
const WORKER_THREADS_MIN_BYTES = 32 * 1024 * 1024;
/** At most this many staging threads: this thread, which reads the export and decides the duplicates, becomes the limit. */
const MAX_STAGING_THREADS = 4;
/** Bytes of a synthetic record, about, to size a synthetic export before it is written. */
const SYNTHETIC_RECORD_BYTES = 500;

/** Staging threads for an export of `bytes`: one per core, up to MAX_STAGING_THREADS; none for a small export or on one core. */
function threadsFor(bytes: number): number {
  const cores = availableParallelism();
  return bytes < WORKER_THREADS_MIN_BYTES || cores < 2 ? 0 : Math.min(cores, MAX_STAGING_THREADS);
}

export interface PreparedSnapshot {
  content: SnapshotContent;
  cleaned: CleanedExport;
  /** Synthetic input only: what the generator put in the export. */
  syntheticCounts: SyntheticExportCounts | null;
  /** generateMs: building the synthetic export's text (0 for a file); the rest is ingestion. */
  timings: { generateMs: number; readAndCleanMs: number; aggregateMs: number };
}

/** An export read and staged: its snapshot to be taken out once, as a stream, by a writer (or in memory). */
interface OpenedSnapshot {
  stream: SnapshotStream;
  staged: StagedExport;
  syntheticCounts: SyntheticExportCounts | null;
  /** generateMs: building the synthetic export's text (0 for a file); readAndCleanMs: reading, cleaning and staging. */
  timings: { generateMs: number; readAndCleanMs: number };
  /** Time spent in summaries() (the numbers are otherwise computed as the rows pass). */
  aggregateMs(): number;
  /** The staging threads it was read with (PrepareSnapshotOptions.threads). */
  threads: number;
}

/** Read an export, clean and stage it: memory does not grow with its size. */
async function openSnapshot(input: SnapshotInput, options: PrepareSnapshotOptions = {}): Promise<OpenedSnapshot> {
  const progress = options.progress ?? silentProgress;
  const applyFilters = options.applyFilters ?? true;
  const started = performance.now();
  const hash = createHash('sha256');
  let staged: StagedExport;
  let source: Omit<SnapshotSource, 'layout' | 'format' | 'column_count' | 'missing_columns'>;
  let syntheticCounts: SyntheticExportCounts | null = null;
  let generateMs = 0;
  let threads: number;

  if (input.kind === 'synthetic') {
    const seed = input.seed ?? SYNTHETIC_SEED;
    const history = input.history === undefined ? undefined : { ...input.history, seed };
    const generated = history === undefined ? generateSyntheticExport(seed) : generateSyntheticHistory(history);
    syntheticCounts = generated.counts;
    threads = options.threads ?? threadsFor(generated.counts.records * SYNTHETIC_RECORD_BYTES);
    generateMs = performance.now() - started;
    progress.phase('reading and cleaning', history === undefined ? generated.counts.records : undefined, 'records');
    const chunks = function* (): Generator<string> {
      for (const chunk of generated.chunks) {
        hash.update(chunk);
        yield chunk;
      }
    };
    staged = await stageExportText(chunks(), {
      applyFilters,
      threads,
      onRecords: (n) => progress.update(n),
      ...(options.stageDirectory !== undefined ? { stageDirectory: options.stageDirectory } : {}),
    });
    source = {
      kind: 'synthetic',
      description:
        history === undefined
          ? `${SYNTHETIC_SOURCE_DESCRIPTION} (seed ${seed}, generator ${SYNTHETIC_GENERATOR_VERSION})`
          : `${SYNTHETIC_SOURCE_DESCRIPTION}, a history of ${history.rows} requests from ${history.fromYear} to ${history.toYear} (seed ${seed}, generator ${SYNTHETIC_GENERATOR_VERSION})`,
      dataset: 'erm2-nwe9',
      file_name: history === undefined ? syntheticExportFileName(seed) : syntheticHistoryFileName(history),
      sha256: '',
      seed,
      generator_version: SYNTHETIC_GENERATOR_VERSION,
    };
  } else {
    const size = statSync(input.path).size;
    threads = options.threads ?? threadsFor(size);
    progress.phase(`reading and cleaning ${basename(input.path)}`, size, 'bytes');
    let records = 0;
    staged = await stageExportText(readFileTextChunks(input.path, { hash, onBytes: (n) => progress.update(n, records) }), {
      applyFilters,
      threads,
      onRecords: (n) => (records = n),
      ...(options.stageDirectory !== undefined ? { stageDirectory: options.stageDirectory } : {}),
    });
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
  const malformedRows = Object.values(staged.malformed).reduce((sum, column) => sum + column.rows, 0);
  if (!options.allowMalformed && tooManyMalformed(malformedRows, staged.rawRowsRead)) {
    staged.close();
    throw new UnreadableExportError(malformedRows, staged.rawRowsRead, staged.malformed);
  }
  const report = staged.report();

  const snapshotDate =
    options.snapshotDate ??
    (input.kind === 'synthetic'
      ? input.history === undefined
        ? SYNTHETIC_SNAPSHOT_DATE
        : `${input.history.toYear + 1}-01-01`
      : (staged.latestTimestamp ?? new Date().toISOString()).slice(0, 10));
  // Without the filters the period runs from the first request's day to the last one's; the last
  // staged request's day bounds it (the last request is known once the rows have been read).
  const periodStart = applyFilters ? SNAPSHOT_PERIOD.start : (staged.firstCreatedAt?.slice(0, 10) ?? snapshotDate);
  const periodEndBound = applyFilters ? SNAPSHOT_PERIOD.end : (staged.lastStagedCreatedAt?.slice(0, 10) ?? snapshotDate);
  const aggregator = new SnapshotAggregator(periodStart, periodEndBound);
  const hasher = new ContentHasher();
  let rowCount = 0;
  let first: string | null = null;
  let last: string | null = null;
  let aggregateMs = 0;
  function* rows(): Generator<ServiceRequest> {
    for (const row of staged.rows()) {
      aggregator.add(row);
      hasher.add(row);
      if (first === null) first = row.created_at;
      last = row.created_at;
      rowCount++;
      yield row;
    }
  }
  const summaries = (): SnapshotSummaries => {
    const summariesStarted = performance.now();
    const rules = staged.rules();
    const period = {
      start: periodStart,
      end: applyFilters ? SNAPSHOT_PERIOD.end : last !== null ? last.slice(0, 10) : snapshotDate,
    };
    const contentSha256 = hasher.digest(rules, {
      snapshot_date: snapshotDate,
      period_start: period.start,
      period_end: period.end,
      source_sha256: sourceSha256,
    });
    const meta: SnapshotMeta = {
      snapshot_id: contentSha256.slice(0, 16),
      content_sha256: contentSha256,
      schema_version: SNAPSHOT_SCHEMA_VERSION,
      source: {
        ...source,
        sha256: sourceSha256,
        layout: staged.layout.layout,
        format: report.format.kind,
        column_count: report.columnCount,
        missing_columns: report.missingColumns.map(columnLabel),
      },
      snapshot_date: snapshotDate,
      row_count: rowCount,
      raw_rows_read: staged.rawRowsRead,
      created_at_min: first,
      created_at_max: last,
      period_start: period.start,
      period_end: period.end,
      filters_applied: applyFilters,
      cleaning_rules: rules,
      built_at: new Date().toISOString(),
    };
    const complaintTypeCounts = aggregator.complaintTypeCounts();
    aggregateMs += performance.now() - summariesStarted;
    return { dailyStats: aggregator.dailyStats(period.end), complaintTypeCounts, meta };
  };
  return {
    stream: { rows: { [Symbol.iterator]: rows }, rowsExpected: staged.candidates, summaries },
    staged,
    syntheticCounts,
    timings: { generateMs, readAndCleanMs },
    aggregateMs: () => aggregateMs,
    threads,
  };
}

/** Read, clean and aggregate an export into what a writer stores, held in memory (tests, small exports). */
export async function prepareSnapshot(input: SnapshotInput, options: PrepareSnapshotOptions = {}): Promise<PreparedSnapshot> {
  const opened = await openSnapshot(input, options);
  const aggregateStarted = performance.now();
  const rows = [...opened.stream.rows];
  const summaries = opened.stream.summaries();
  const content: SnapshotContent = { rows, dailyStats: [...summaries.dailyStats], complaintTypeCounts: summaries.complaintTypeCounts, meta: summaries.meta };
  const { rawRowsRead, layout, format, filtersApplied, latestTimestamp, malformed } = opened.staged;
  return {
    content,
    cleaned: { rows, rules: summaries.meta.cleaning_rules, report: opened.staged.report(), rawRowsRead, layout, format, filtersApplied, latestTimestamp, malformed },
    syntheticCounts: opened.syntheticCounts,
    timings: { ...opened.timings, aggregateMs: performance.now() - aggregateStarted },
  };
}

/** Store a snapshot in SQLite or PostgreSQL; `onThread`: through a writer thread (snapshot-writer-thread.ts). */
export async function writeSnapshot(
  output: SnapshotOutput,
  content: SnapshotContent | SnapshotStream,
  progress: ProgressReporter = silentProgress,
  onThread = false,
): Promise<void> {
  progress.phase(output.kind === 'sqlite' ? 'writing SQLite' : 'loading PostgreSQL', 'rowsExpected' in content ? content.rowsExpected : content.rows.length, 'rows');
  if (onThread) {
    await writeSnapshotOnThread(output, streamOf(content), (n, total) => progress.update(n, undefined, total));
  } else if (output.kind === 'sqlite') {
    writeSqliteSnapshot(output.path, content, (n, total) => progress.update(n, undefined, total));
  } else {
    await writePostgresSnapshot(output.url, content, {
      ...(output.schema !== undefined ? { schema: output.schema } : {}),
      onProgress: (n, total) => progress.update(n, undefined, total),
    });
  }
}

export interface BuildSnapshotResult {
  meta: SnapshotMeta;
  /** What the command's summary says of the export (export-summary.ts). */
  report: ExportReport;
  syntheticCounts: SyntheticExportCounts | null;
  /** ingestMs: read, clean, aggregate and write (everything but generateMs). */
  timings: { generateMs: number; readAndCleanMs: number; aggregateMs: number; writeMs: number; ingestMs: number; totalMs: number };
}

/** Read, clean, aggregate and store: the whole snapshot command, in memory that does not grow with the export. */
export async function buildSnapshot(
  input: SnapshotInput,
  output: SnapshotOutput,
  options: PrepareSnapshotOptions = {},
): Promise<BuildSnapshotResult> {
  const started = performance.now();
  const opened = await openSnapshot(input, options);
  const writeStarted = performance.now();
  let meta: SnapshotMeta | undefined;
  try {
    await writeSnapshot(
      output,
      {
        ...opened.stream,
        summaries: () => {
          const summaries = opened.stream.summaries();
          meta = summaries.meta;
          return summaries;
        },
      },
      options.progress,
      opened.threads > 0,
    );
  } finally {
    opened.staged.close();
  }
  if (meta === undefined) throw new Error('the writer did not store the summaries');
  const aggregateMs = opened.aggregateMs();
  const writeMs = performance.now() - writeStarted - aggregateMs;
  const totalMs = performance.now() - started;
  return {
    meta,
    report: opened.staged.report(),
    syntheticCounts: opened.syntheticCounts,
    timings: { ...opened.timings, aggregateMs, writeMs, ingestMs: totalMs - opened.timings.generateMs, totalMs },
  };
}
