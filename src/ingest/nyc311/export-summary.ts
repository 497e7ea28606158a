/**
 * What the snapshot command says of an export besides its counts: the layout it was read in, each
 * read column it lacks and what that gives, and every row not served, under the rule that left it
 * out, with its first examples (line, Unique Key, column, value). The same facts go to stderr as
 * lines and to stdout in the JSON summary.
 *
 * It also holds the refusal rule: when more than MALFORMED_SHARE_REFUSED of the records are
 * malformed (a key, a date or a number in a form no export uses), the export was evidently not read
 * as its author meant, and nothing is written unless the user allows it (--allow-malformed).
 */
import { type ExportReport, type LeftOut, type RemovalRuleId, type RowExample } from './clean-export.js';
import { columnLabel, missingColumnEffect } from './export-columns.js';
import { describeFormat } from './export-reader.js';
import { VALUE_FORMS } from './cleaning-rules.js';

/** The share of malformed records above which the command refuses the export (unless --allow-malformed). */
export const MALFORMED_SHARE_REFUSED = 0.01;

/** Why each removal rule leaves a row out, in a few words. */
const REASON_WORDS: Record<RemovalRuleId, string> = {
  malformed_record: 'a value in a form no export uses',
  agency_not_dot: 'not a DOT request (the DOT filter; --no-filter keeps them)',
  created_outside_period: 'created outside the period (the period filter; --no-filter keeps them)',
  duplicate_unique_key: 'a Unique Key read before',
  closed_before_created: 'closed before it was created',
  repeated_submission: 'a repeated submission of a kept request',
};

const count = (n: number): string => n.toLocaleString('en-US');

/** Malformed records: more than MALFORMED_SHARE_REFUSED of those read. */
export function tooManyMalformed(malformedRows: number, rowsRead: number): boolean {
  return malformedRows > rowsRead * MALFORMED_SHARE_REFUSED;
}

function exampleText(example: RowExample): string {
  const where = example.line === null ? '' : `line ${example.line}`;
  const key = example.unique_key === null ? '' : `Unique Key ${example.unique_key}`;
  const place = [where, key].filter((part) => part.length > 0).join(', ');
  return `${place.length > 0 ? `${place}: ` : ''}${example.column} ${JSON.stringify(example.value)}`;
}

/** The malformed records of each column, most first. */
function malformedColumns(malformed: Record<string, LeftOut>): [string, LeftOut][] {
  return Object.entries(malformed).sort((a, b) => b[1].rows - a[1].rows || a[0].localeCompare(b[0]));
}

/**
 * The export holds more malformed records than the command leaves out on its own: the message names
 * each column with its records, an example value and the forms the column is read in.
 */
export class UnreadableExportError extends Error {
  constructor(
    readonly malformedRows: number,
    readonly rowsRead: number,
    readonly malformed: Record<string, LeftOut>,
  ) {
    const share = ((malformedRows / rowsRead) * 100).toFixed(1);
    const lines = [
      `${count(malformedRows)} of ${count(rowsRead)} records (${share}%) hold a value in a form no export uses, more than the ${MALFORMED_SHARE_REFUSED * 100}% the command leaves out on its own: nothing was written.`,
      ...malformedColumns(malformed).map(([column, { rows, examples }]) => {
        const example = examples[0];
        return `  ${column}: ${count(rows)} records${example === undefined ? '' : `, e.g. ${exampleText(example)}`}. Read as: ${VALUE_FORMS[column] ?? 'its forms'}.`;
      }),
      'Correct the file (or export it again), or give --allow-malformed to leave these records out and go on.',
    ];
    super(lines.join('\n'));
    this.name = 'UnreadableExportError';
  }
}

/** The summary's lines for stderr: the layout, each missing column, and each reason rows were not served. */
export function summaryLines(report: ExportReport, rowsRead: number, rowsServed: number, malformedAllowed: boolean): string[] {
  const lines = [`read as ${describeFormat(report.format)}, ${count(report.columnCount)} ${report.format.kind.endsWith('csv') ? 'columns' : 'keys'}, ${count(rowsRead)} records`];
  for (const column of report.missingColumns) lines.push(`column "${columnLabel(column)}" is not in the export: ${missingColumnEffect(column)}`);
  for (const [reason, { rows, examples }] of Object.entries(report.notServed) as [RemovalRuleId, LeftOut][]) {
    if (rows === 0) continue;
    lines.push(`${count(rows)} ${rows === 1 ? 'row' : 'rows'} not served: ${reason} (${REASON_WORDS[reason]})${examples.length > 0 ? `, e.g. ${examples.map(exampleText).join('; ')}` : ''}`);
  }
  const malformedRows = report.notServed.malformed_record.rows;
  if (malformedRows > 0) {
    for (const [column, { rows }] of malformedColumns(report.malformed)) lines.push(`  malformed ${column}: ${count(rows)}; read as ${VALUE_FORMS[column] ?? 'its forms'}`);
    if (malformedAllowed && tooManyMalformed(malformedRows, rowsRead)) lines.push(`--allow-malformed: ${count(malformedRows)} malformed records left out, ${count(rowsServed)} requests served`);
  }
  if (rowsServed === 0 && rowsRead > 0) lines.push('the snapshot holds no request: every row read was left out for the reasons above');
  return lines;
}

/** The summary's fields for the JSON on stdout. */
export function summaryFields(report: ExportReport): Record<string, unknown> {
  return {
    export: {
      format: report.format.kind,
      ...(report.format.kind.endsWith('csv') ? { delimiter: report.format.delimiter } : {}),
      column_count: report.columnCount,
      missing_columns: report.missingColumns.map((column) => ({ column: columnLabel(column), gives: missingColumnEffect(column) })),
    },
    not_served: Object.fromEntries(Object.entries(report.notServed).filter(([, leftOut]) => leftOut.rows > 0)),
    ...(report.notServed.malformed_record.rows > 0 ? { malformed_by_column: Object.fromEntries(malformedColumns(report.malformed)) } : {}),
  };
}
