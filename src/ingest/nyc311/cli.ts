/**
 * The snapshot command:
 *
 *   npm run snapshot -- [--input export.csv | --synthetic] [--output data/service-requests.sqlite | --database postgres://...]
 *                       [--no-filter] [--seed N] [--rows N --from YEAR --to YEAR] [--snapshot-date YYYY-MM-DD] [--schema NAME]
 *                       [--threads N] [--allow-malformed] [--write-synthetic-export FILE [--layout L]] [--quiet]
 *
 * Default: the synthetic export into data/service-requests.sqlite. Progress goes to stderr (a bar
 * on a terminal, a line every 2 s otherwise), then what the summary says of the export (its layout,
 * the columns it lacks, every row not served with examples); the summary (one JSON object) to stdout.
 * A file that cannot be read stops the command with exit code 1 and one message, never a stack trace.
 */
import { closeSync, existsSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildSnapshot, type SnapshotInput, type SnapshotOutput } from './build-snapshot.js';
import { DEFAULT_SNAPSHOT_RELATIVE_PATH, defaultSnapshotPath } from './ensure-snapshot.js';
import { MissingColumnError } from './export-columns.js';
import { ExportFormatError } from './export-format-error.js';
import { UnreadableExportError, summaryFields, summaryLines } from './export-summary.js';
import { isPostgresUrl, parsePostgresTarget } from '../../shared/postgres-schema.js';
import { createProgressReporter } from './progress-reporter.js';
import {
  SYNTHETIC_LAYOUTS,
  SYNTHETIC_SEED,
  type SyntheticHistoryOptions,
  type SyntheticLayout,
  generateSyntheticExport,
  generateSyntheticHistory,
} from './synthetic-export.js';
import { removeStageDirectories } from './candidate-stage.js';
import { temporarySnapshotPrefix } from './sqlite-snapshot-writer.js';

const USAGE = `Usage: npm run snapshot -- [options]

  --input FILE             an NYC Open Data 311 export (erm2-nwe9): the portal's CSV of any year, the API's CSV
                           or JSON, or such a file re-saved by a spreadsheet or pandas (the layout is found
                           from the content; see docs/service-requests-data.md)
  --synthetic              the synthetic export (default when --input is not given)
  --seed N                 seed of the synthetic export (default ${SYNTHETIC_SEED})
  --rows N                 a synthetic history of N requests instead (with --from and --to; no filters)
  --from YEAR, --to YEAR   the history's first and last year (whole years)
  --output FILE            SQLite file to write (default ${DEFAULT_SNAPSHOT_RELATIVE_PATH} in the repository)
  --database URL           load PostgreSQL instead (postgres://...; ?schema=NAME selects the schema, default public)
  --schema NAME            PostgreSQL schema (overrides ?schema=)
  --no-filter              keep every agency and date (for exports that are not DOT January-June 2025)
  --snapshot-date DATE     the day the export reflects (default: synthetic 2025-07-01, file: its latest date)
  --threads N              worker threads that parse and clean the export, besides one that writes
                           (0: none; default one per core, up to 4, for an export of 32 MiB or more)
  --allow-malformed        go on when more than 1% of the records are malformed (a key, date or number in a
                           form no export uses), leaving them out (default: refuse, writing nothing)
  --write-synthetic-export FILE   only write the synthetic export (or history) to FILE
  --layout L               its layout: portal-csv (default), api-csv or api-json
  --quiet                  no progress
  --help
`;

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      input: { type: 'string' },
      synthetic: { type: 'boolean' },
      seed: { type: 'string' },
      rows: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      output: { type: 'string' },
      database: { type: 'string' },
      schema: { type: 'string' },
      'no-filter': { type: 'boolean' },
      'snapshot-date': { type: 'string' },
      'write-synthetic-export': { type: 'string' },
      threads: { type: 'string' },
      'allow-malformed': { type: 'boolean' },
      layout: { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const seed = values.seed === undefined ? SYNTHETIC_SEED : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 2_147_483_647) throw new UsageError(`--seed must be an integer from 0 to 2147483647`);
  const history = readHistoryOptions(values);
  const layout = (values.layout ?? 'portal-csv') as SyntheticLayout;
  if (!SYNTHETIC_LAYOUTS.includes(layout)) throw new UsageError(`--layout must be one of ${SYNTHETIC_LAYOUTS.join(', ')}`);
  if (values.layout !== undefined && values['write-synthetic-export'] === undefined) throw new UsageError('--layout goes with --write-synthetic-export');
  if (values['write-synthetic-export'] !== undefined) {
    const generated = history === undefined ? generateSyntheticExport(seed, layout) : generateSyntheticHistory({ ...history, seed, layout });
    const fd = openSync(values['write-synthetic-export'], 'w');
    try {
      for (const chunk of generated.chunks) writeSync(fd, chunk);
    } finally {
      closeSync(fd);
    }
    process.stdout.write(`${JSON.stringify({ file: values['write-synthetic-export'], seed, layout, counts: generated.counts })}\n`);
    return 0;
  }
  if (values.input !== undefined && values.synthetic) throw new UsageError('give either --input or --synthetic, not both');
  if (values.output !== undefined && values.database !== undefined) throw new UsageError('give either --output or --database, not both');
  if (values.database !== undefined && !isPostgresUrl(values.database)) throw new UsageError('--database must be a postgres:// URL');
  if (values['snapshot-date'] !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(values['snapshot-date'])) {
    throw new UsageError('--snapshot-date must be YYYY-MM-DD');
  }
  if (history !== undefined && values.input !== undefined) throw new UsageError('--rows makes a synthetic history: not with --input');
  const threads = values.threads === undefined ? undefined : Number(values.threads);
  if (threads !== undefined && (!/^\d+$/.test(values.threads ?? '') || threads > 64)) throw new UsageError('--threads must be an integer from 0 to 64');
  const input: SnapshotInput =
    values.input !== undefined ? { kind: 'file', path: values.input } : { kind: 'synthetic', seed, ...(history !== undefined ? { history } : {}) };
  const output: SnapshotOutput =
    values.database !== undefined
      ? { kind: 'postgres', url: values.database, ...(values.schema !== undefined ? { schema: values.schema } : {}) }
      : { kind: 'sqlite', path: values.output ?? defaultSnapshotPath() };
  if (output.kind === 'postgres') parsePostgresTarget(output.url, output.schema); // validates the schema name early

  removeTemporaryFilesWhenStopped(output);
  const progress = values.quiet ? undefined : createProgressReporter();
  const result = await buildSnapshot(input, output, {
    // A history spans years and, like a real export of all agencies, is loaded without the filters.
    applyFilters: !values['no-filter'] && history === undefined,
    ...(values['snapshot-date'] !== undefined ? { snapshotDate: values['snapshot-date'] } : {}),
    ...(threads !== undefined ? { threads } : {}),
    ...(progress ? { progress } : {}),
    allowMalformed: values['allow-malformed'] === true,
  });
  const target =
    output.kind === 'sqlite' ? output.path : (() => {
      const t = parsePostgresTarget(output.url, output.schema);
      const url = new URL(t.connectionString);
      url.password = url.password ? '***' : '';
      return `${url.toString()} (schema ${t.schema})`;
    })();
  const { meta, timings, report } = result;
  progress?.finish(
    `snapshot ${meta.snapshot_id}: ${meta.row_count.toLocaleString('en-US')} requests from ${meta.raw_rows_read.toLocaleString('en-US')} rows read -> ${target} in ${(timings.totalMs / 1000).toFixed(1)} s`,
  );
  for (const line of summaryLines(report, meta.raw_rows_read, meta.row_count, values['allow-malformed'] === true)) process.stderr.write(`snapshot: ${line}\n`);
  process.stdout.write(
    `${JSON.stringify({
      target,
      snapshot_id: meta.snapshot_id,
      source: meta.source.description,
      row_count: meta.row_count,
      raw_rows_read: meta.raw_rows_read,
      removed: Object.fromEntries(meta.cleaning_rules.filter((r) => r.kind !== 'transformation').map((r) => [r.id, r.rows_removed])),
      ...summaryFields(report),
      timings_ms: Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(v)])),
    })}\n`,
  );
  return 0;
}

/**
 * A command stopped by a signal (Ctrl-C, SIGTERM, its terminal closed) first removes what it wrote
 * so far: the stages in the temporary directory and the SQLite file not yet renamed onto the output,
 * then stops with the signal as it would have. The signal is handled when the command's thread
 * turns: at once while worker threads stage and write (an export of 32 MiB or more, or --threads);
 * a small export written on the command's own thread (--threads 0) is finished first, in seconds.
 * (A PostgreSQL load stopped midway leaves its new snapshot schema, which the pointer never named;
 * the next load of that schema drops it.)
 */
function removeTemporaryFilesWhenStopped(output: SnapshotOutput): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      removeStageDirectories();
      if (output.kind === 'sqlite') {
        const prefix = basename(temporarySnapshotPrefix(output.path));
        const directory = dirname(output.path);
        for (const name of existsSync(directory) ? readdirSync(directory) : []) if (name.startsWith(prefix)) rmSync(join(directory, name), { force: true });
      }
      process.kill(process.pid, signal);
    });
  }
}

/** --rows, --from and --to, all three or none. */
function readHistoryOptions(values: { rows?: string; from?: string; to?: string }): SyntheticHistoryOptions | undefined {
  if (values.rows === undefined && values.from === undefined && values.to === undefined) return undefined;
  const rows = Number(values.rows);
  const fromYear = Number(values.from);
  const toYear = Number(values.to);
  if (!Number.isInteger(rows) || rows < 1 || rows > 100_000_000) throw new UsageError('--rows must be an integer from 1 to 100000000');
  if (!Number.isInteger(fromYear) || !Number.isInteger(toYear) || fromYear < 2000 || toYear > 2100 || fromYear > toYear) {
    throw new UsageError('--from and --to must be years from 2000 to 2100, --from not after --to');
  }
  return { rows, fromYear, toYear };
}

class UsageError extends Error {}

/** The errors of opening or reading a file, in words (the command names the file, without a stack trace). */
const FILE_ERRORS: ReadonlyMap<string, string> = new Map([
  ['ENOENT', 'no such file'],
  ['EISDIR', 'it is a folder, not a file'],
  ['EACCES', 'permission denied'],
  ['EPERM', 'permission denied'],
  ['EIO', 'the disk failed to read it'],
]);

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error instanceof TypeError && (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`snapshot: ${error.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (error instanceof MissingColumnError || error instanceof ExportFormatError || error instanceof UnreadableExportError) {
      process.stderr.write(`\nsnapshot: ${error.message}\n`);
      process.exitCode = 1;
    } else if (FILE_ERRORS.has((error as NodeJS.ErrnoException).code ?? '')) {
      const { code, path } = error as NodeJS.ErrnoException;
      process.stderr.write(`\nsnapshot: cannot read ${path ?? 'the export'}: ${FILE_ERRORS.get(code ?? '') ?? code}\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`\nsnapshot failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
