/**
 * A streaming reader of the API's JSON export (`/resource/erm2-nwe9.json`: an array of objects, one
 * per request, a field left out when it is null, every value a string) and of JSON Lines (one object
 * per line), in the memory of a few records whatever the file's size.
 *
 * readJsonRecordTexts cuts the text into pieces of whole records on the command's thread, tracking
 * only strings and brackets, and gives each piece the offsets of its records; JsonRecordParser parses
 * each record (JSON.parse, on any thread) and maps its keys onto the read columns by name
 * (export-columns.ts), into the same fields a CSV record gives. A record longer than 1 MiB is
 * refused at once with its line, as in the CSV reader.
 */
import { type ExportPiece, ExportFormatError, MAX_RECORD_CHARS, countNewlines, recordTooLong } from './export-format-error.js';
import { JSON_RECORD_COLUMNS, exportColumnNamed } from './export-columns.js';

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COMMA = 44;

const isWhitespace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;

/** Whether the text holds JSON Lines (objects one after another) or one array of objects. */
export type JsonContainer = 'array' | 'lines';

/**
 * The container of a JSON export, from its first character that is not white space: `[` an array,
 * `{` JSON Lines; null when it is neither (not a JSON export).
 */
export function jsonContainerOf(firstCharacter: string): JsonContainer | null {
  return firstCharacter === '[' ? 'array' : firstCharacter === '{' ? 'lines' : null;
}

/** Where the cutter is: before the array, between records, inside one, after the array. */
type CutterState = 'start' | 'between' | 'record' | 'end';

/**
 * Cut JSON text chunks into pieces of whole records (a UTF-8 byte order mark at the start removed),
 * each with the start and end of its records. Refuses, with the line: a first character that is
 * neither `[` nor `{`, an element of the array that is not an object, text after the array, a
 * record longer than MAX_RECORD_CHARS, and a file that ends inside a record or before the array's `]`
 * (a download cut short).
 */
export async function* readJsonRecordTexts(chunks: AsyncIterable<string> | Iterable<string>): AsyncGenerator<ExportPiece> {
  let state: CutterState = 'start';
  let container: JsonContainer = 'array';
  let text = '';
  /** Newlines of the file before text[0]. */
  let linesBefore = 0;
  let i = 0;
  let depth = 0;
  let inString = false;
  let recordStart = 0;
  let records = 0;
  let first = true;
  const bounds: number[] = [];
  const lineAt = (at: number): number => linesBefore + 1 + countNewlines(text, 0, at);
  const fail = (at: number, reason: string): ExportFormatError => new ExportFormatError('JSON', lineAt(at), reason);

  for await (const chunk of chunks) {
    text = text.length === 0 ? chunk : text + chunk;
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    const n = text.length;
    while (i < n) {
      if (state === 'record') {
        if (inString) {
          const q = text.indexOf('"', i);
          if (q < 0) {
            i = n;
            break;
          }
          let k = q - 1;
          while (text.charCodeAt(k) === BACKSLASH) k--;
          i = q + 1;
          if ((q - 1 - k) % 2 === 0) inString = false; // an even run of backslashes escapes none
          continue;
        }
        const c = text.charCodeAt(i++);
        if (c === QUOTE) inString = true;
        else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
        else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) {
          if (i - recordStart > MAX_RECORD_CHARS) throw fail(recordStart, recordTooLong('a string is probably never closed'));
          bounds.push(recordStart, i);
          records++;
          state = 'between';
        }
        continue;
      }
      const c = text.charCodeAt(i);
      if (isWhitespace(c)) {
        i++;
        continue;
      }
      if (state === 'start') {
        if (c === OPEN_BRACKET) {
          state = 'between';
          i++;
        } else if (c === OPEN_BRACE) {
          container = 'lines';
          state = 'between';
        } else {
          throw fail(i, 'not a JSON export: it starts with neither [ (an array of records) nor { (one record per line)');
        }
      } else if (state === 'between') {
        if (c === OPEN_BRACE) {
          state = 'record';
          recordStart = i;
          depth = 0;
        } else if (c === COMMA && container === 'array') {
          i++;
        } else if (c === CLOSE_BRACKET && container === 'array') {
          state = 'end';
          i++;
        } else {
          throw fail(i, `record ${records + 1} is not a JSON object: an export in JSON is ${container === 'array' ? 'an array of objects' : 'one object per line'}, one per request`);
        }
      } else {
        throw fail(i, 'text after the end of the JSON array');
      }
    }
    if (state === 'record' && n - recordStart > MAX_RECORD_CHARS) throw fail(recordStart, recordTooLong('a string is probably never closed'));
    // Yield the complete records; keep the text of the one under way.
    const keepFrom = state === 'record' ? recordStart : n;
    if (bounds.length > 0) {
      const cut = bounds[bounds.length - 1] as number;
      const piece = text.slice(0, cut);
      yield { text: piece, linesBefore, bounds: Int32Array.from(bounds) };
      bounds.length = 0;
      linesBefore += countNewlines(piece);
      text = text.slice(cut);
      i -= cut;
      recordStart -= cut;
    } else if (keepFrom > 0) {
      linesBefore += countNewlines(text, 0, keepFrom);
      text = text.slice(keepFrom);
      i -= keepFrom;
      recordStart -= keepFrom;
    }
  }
  if (state === 'start') return;
  if (state === 'record') {
    throw fail(recordStart, `the file ends inside record ${records + 1}, which starts here: the export is cut short${inString ? ', or a string is never closed' : ''}. Nothing was written`);
  }
  if (state === 'between' && container === 'array') {
    throw fail(text.length, `the JSON array is not closed (no ]): the export is cut short after ${records.toLocaleString('en-US')} records. Nothing was written`);
  }
}

/** The text of a JSON value as a CSV field holds it: a string as it is, null as '', a number, a boolean or an object as JSON. */
function fieldText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value as number | boolean); // eslint-disable-line @typescript-eslint/no-unnecessary-type-assertion -- what is left of a JSON value
}

/**
 * Parses the records of JSON pieces into fields in the order of JSON_RECORD_COLUMNS (a key absent
 * or null gives ''), and keeps which read columns and which keys it has met (for the summary: a
 * column no record held is missing, as the API leaves null fields out). A record that JSON.parse
 * refuses gives a record of one field, its text, which malformed_record counts.
 */
export class JsonRecordParser {
  /** Each key met -> its index in JSON_RECORD_COLUMNS, or -1 for a column the ingestion does not read. */
  private readonly indexOfKey = new Map<string, number>();
  /** 1 for each column of JSON_RECORD_COLUMNS that a record held (not null). */
  readonly held = new Uint8Array(JSON_RECORD_COLUMNS.length);
  private readonly positionOf = new Map(JSON_RECORD_COLUMNS.map((name, index) => [name, index]));

  /** The records of a piece; `starts` receives where each starts in the piece's text. */
  parse(piece: ExportPiece, starts?: number[]): string[][] {
    const bounds = piece.bounds ?? new Int32Array(0);
    const width = JSON_RECORD_COLUMNS.length;
    const records: string[][] = [];
    for (let b = 0; b < bounds.length; b += 2) {
      const start = bounds[b] as number;
      const text = piece.text.slice(start, bounds[b + 1]);
      starts?.push(start);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        records.push([`not JSON: ${text.slice(0, 80)}`]);
        continue;
      }
      const fields = new Array<string>(width).fill('');
      for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
        let index = this.indexOfKey.get(key);
        if (index === undefined) {
          const column = exportColumnNamed(key);
          index = column === undefined ? -1 : (this.positionOf.get(column) ?? -1);
          this.indexOfKey.set(key, index);
        }
        if (index < 0 || raw === null) continue;
        fields[index] = fieldText(raw);
        this.held[index] = 1;
      }
      records.push(fields);
    }
    return records;
  }

  /** The keys met so far. */
  keys(): string[] {
    return [...this.indexOfKey.keys()];
  }
}
