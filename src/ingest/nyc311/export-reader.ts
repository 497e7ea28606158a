/**
 * Opening an export whatever its layout, found from its content (never from the file name):
 *
 * - `portal_csv`: the portal's CSV, columns named as the portal shows them (`Unique Key`, ...), of
 *   any header generation; also the same re-saved by a spreadsheet, pandas or R;
 * - `api_csv`: the API's CSV (`/resource/erm2-nwe9.csv`), columns named by field (`unique_key`),
 *   every field quoted, a `location` that spans lines;
 * - `api_json`: the API's JSON (`/resource/erm2-nwe9.json`), an array of objects;
 * - `json_lines`: one such object per line.
 *
 * A CSV's delimiter is found from its header line (a spreadsheet may write `;` or a tab). A file
 * that is none of these (an archive, a workbook, binary data) is refused with a message that says
 * what it looks like. openExport returns the layout, the header (for JSON, the read columns) and the
 * pieces of whole records; PieceParser turns a piece into records of fields, on any thread.
 */
import { detectCsvDelimiter, parseCsvRecords, readCsvHeader, readCsvRecordTexts } from './csv-reader.js';
import { type ExportPiece, ExportFormatError, MAX_RECORD_CHARS, countNewlines } from './export-format-error.js';
import { type ExportColumnName, type ExportLayout, JSON_RECORD_COLUMNS, JSON_RECORD_HEADER, locateExportColumns } from './export-columns.js';
import { JsonRecordParser, jsonContainerOf, readJsonRecordTexts } from './json-reader.js';

/** What an export without a header line fails with. */
export const EMPTY_EXPORT_MESSAGE = 'The export is empty: no header row was found.';

/** The layouts an export is read in (see the module's comment). */
export const EXPORT_FORMATS = ['portal_csv', 'api_csv', 'api_json', 'json_lines'] as const;
export type ExportFormatKind = (typeof EXPORT_FORMATS)[number];

/** An export's layout: its kind and, for a CSV, its delimiter. Plain data (sent to worker threads). */
export interface ExportFormat {
  kind: ExportFormatKind;
  delimiter: string;
}

export interface OpenedExport {
  format: ExportFormat;
  /** The CSV's header, or the read columns for JSON. */
  header: string[];
  layout: ExportLayout;
  /** The pieces of whole records, the first one after the header. */
  pieces: AsyncIterator<ExportPiece>;
}

/** In words, for the summary: `the portal's CSV`, ... */
export function describeFormat(format: ExportFormat): string {
  const delimiter = format.delimiter === ',' ? '' : `, fields separated by ${format.delimiter === '\t' ? 'tabs' : `"${format.delimiter}"`}`;
  switch (format.kind) {
    case 'portal_csv':
      return `the portal's CSV (columns named as the portal shows them${delimiter})`;
    case 'api_csv':
      return `the API's CSV (columns named by field${delimiter})`;
    case 'api_json':
      return "the API's JSON (an array of objects)";
    case 'json_lines':
      return 'JSON Lines (one object per line)';
  }
}

/** Refuses text that is not a CSV or JSON export, saying what it looks like. */
function refuseBinary(text: string): void {
  if (text.startsWith('PK\u0003\u0004')) {
    throw new ExportFormatError(null, null, 'The export is a ZIP archive or a spreadsheet workbook (.xlsx), not a CSV or JSON file: unpack it, or save the sheet as CSV, first.');
  }
  if (text.startsWith('\u001f\ufffd')) throw new ExportFormatError(null, null, 'The export is compressed (gzip), not a CSV or JSON file: unpack it first.');
  const head = text.slice(0, 65_536);
  if (head.includes('\u0000')) {
    throw new ExportFormatError(null, null, 'The export is not text: it holds NUL bytes (a binary file, or UTF-16 without its byte order mark). A CSV or JSON export in UTF-8 (or UTF-16 with its mark) is expected.');
  }
}

/**
 * Refuses a JSON export that is one object holding every record (GeoJSON's FeatureCollection, the
 * portal's rows.json with its "meta" and "data"), which is not one record per line.
 */
async function refuseWholeDocument(text: string, source: AsyncIterator<string>, before: string[]): Promise<void> {
  let head = text;
  while (head.length < 4096) {
    const next = await source.next();
    if (next.done === true) break;
    before.push(next.value);
    head += next.value;
  }
  const key = /^\s*\{\s*"([^"]*)"\s*:/.exec(head.replace(/^\uFEFF/, ''))?.[1];
  if (key === 'type' || key === 'features' || key === 'meta' || key === 'data') {
    throw new ExportFormatError(
      null,
      null,
      'The export is one JSON document holding every record (GeoJSON, or the portal\'s rows.json with "meta" and "data"): it is not read. Export the data as CSV, or as JSON from the API (/resource/erm2-nwe9.json: an array of records).',
    );
  }
}

/** The chunks of a synchronous iterable, one at a time. */
function asyncIteratorOf(chunks: Iterable<string>): AsyncIterator<string> {
  const iterator = chunks[Symbol.iterator]();
  return { next: () => Promise.resolve(iterator.next()) };
}

/** Chunks with some put back in front (what openExport read to find the layout). */
async function* replayed(before: string[], rest: AsyncIterator<string>): AsyncGenerator<string> {
  // Taken out as they are given, so that the first chunks are not held for the whole read.
  for (let chunk = before.shift(); chunk !== undefined; chunk = before.shift()) yield chunk;
  for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
}

/** Index of the first character that is neither white space nor a byte order mark, or -1. */
function firstSignificant(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0xfeff && c !== 32 && c !== 10 && c !== 13 && c !== 9) return i;
  }
  return -1;
}

/**
 * Open an export: find its layout from its first characters (`[` or `{`: JSON; anything else: CSV,
 * its delimiter from the header line), read the header, and return the pieces of records after it.
 * Throws ExportFormatError for a file that is not an export, MissingColumnError for a CSV without
 * Unique Key or Created Date.
 */
export async function openExport(chunks: AsyncIterable<string> | Iterable<string>): Promise<OpenedExport> {
  const source: AsyncIterator<string> = Symbol.asyncIterator in chunks ? chunks[Symbol.asyncIterator]() : asyncIteratorOf(chunks);
  // Read until the first significant character, and for a CSV the whole first line (the header).
  const before: string[] = [];
  let text = '';
  let kind: 'csv' | 'json' | null = null;
  for (;;) {
    const next = await source.next();
    if (next.done === true) break;
    before.push(next.value);
    text += next.value;
    const at = firstSignificant(text);
    if (at < 0) continue;
    if (kind === null) kind = jsonContainerOf(text.charAt(at)) === null ? 'csv' : 'json';
    if (kind === 'json') break;
    if (/[\r\n]/.test(text.slice(at)) || text.length > MAX_RECORD_CHARS) break;
  }
  refuseBinary(text);
  const rest = replayed(before, source);
  if (kind === 'json') {
    const container = jsonContainerOf(text.charAt(firstSignificant(text)));
    if (container === 'lines') await refuseWholeDocument(text, source, before);
    const format: ExportFormat = { kind: container === 'lines' ? 'json_lines' : 'api_json', delimiter: ',' };
    return { format, header: [...JSON_RECORD_HEADER], layout: locateExportColumns(JSON_RECORD_HEADER), pieces: readJsonRecordTexts(rest)[Symbol.asyncIterator]() };
  }
  if (kind === null) throw new ExportFormatError(null, null, EMPTY_EXPORT_MESSAGE);
  const delimiter = detectCsvDelimiter(text.slice(firstSignificant(text)));
  const pieces = readCsvRecordTexts(rest, delimiter)[Symbol.asyncIterator]();
  for (;;) {
    const next = await pieces.next();
    if (next.done === true) throw new ExportFormatError(null, null, EMPTY_EXPORT_MESSAGE);
    const found = readCsvHeader(next.value, delimiter);
    if (found === null) continue;
    const header = found.header;
    const layout = locateExportColumns(header);
    const style = header.every((name) => /^[a-z0-9_:@]*$/.test(name.trim())) ? 'api_csv' : 'portal_csv';
    const first: ExportPiece = { text: next.value.text.slice(found.bodyStart), linesBefore: next.value.linesBefore + countNewlines(next.value.text, 0, found.bodyStart) };
    return { format: { kind: style, delimiter }, header, layout, pieces: prepended(first, pieces) };
  }
}

async function* prepended(first: ExportPiece, rest: AsyncIterator<ExportPiece>): AsyncGenerator<ExportPiece> {
  if (first.text.length > 0) yield first;
  for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
}

/**
 * Turns pieces of an export into records of fields (in the order of the header), with where each
 * starts in its piece. For a CSV, the columns the cleaning never reads are returned as '' (not
 * copied). For JSON, it also keeps which read columns a record held and which keys it met.
 */
export class PieceParser {
  private readonly json: JsonRecordParser | null;
  private readonly keep: boolean[];

  constructor(
    readonly format: ExportFormat,
    header: readonly string[],
  ) {
    this.json = format.kind === 'api_json' || format.kind === 'json_lines' ? new JsonRecordParser() : null;
    const used = new Set(Object.values(locateExportColumns(header).columns));
    this.keep = header.map((_, i) => used.has(i));
  }

  parse(piece: ExportPiece, starts: number[]): string[][] {
    if (this.json !== null) return this.json.parse(piece, starts);
    return parseCsvRecords(piece, 0, { delimiter: this.format.delimiter, keep: this.keep, starts });
  }

  /** JSON: what the records held so far (null for a CSV, whose header says it). */
  jsonColumns(): { held: ExportColumnName[]; keys: string[] } | null {
    if (this.json === null) return null;
    const held = this.json.held;
    return { held: JSON_RECORD_COLUMNS.filter((_, i) => held[i] === 1), keys: this.json.keys() };
  }
}
