/**
 * A streaming CSV reader (RFC 4180): fields separated by a delimiter (a comma, or the semicolon,
 * tab or bar a spreadsheet may write, found from the header line), records by LF or CRLF, fields
 * optionally enclosed in double quotes, a double quote inside a quoted field written twice,
 * delimiters and line breaks allowed inside quoted fields. A UTF-8 byte order mark at the start is
 * ignored, blank lines are skipped.
 *
 * Memory is bounded on broken input too: a record longer than MAX_RECORD_CHARS (1 MiB) is refused
 * at once with its line (a quote opened and never closed would otherwise read the rest of the file
 * into one field), and so is a record that ends but is longer than that.
 */
import type { Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { type ExportPiece, ExportFormatError, MAX_RECORD_CHARS, countNewlines, recordTooLong } from './export-format-error.js';

const QUOTE = 34;
const LF = 10;
const CR = 13;

/** The delimiters a CSV export may have, the comma first (the one chosen when the header holds none). */
const DELIMITERS = [',', ';', '\t', '|'] as const;

interface ParseResult {
  records: string[][];
  /** Index of the first character not consumed (start of an incomplete record). */
  consumed: number;
}

/** Where a piece's text is in the file (its first line), and how records are separated. */
interface ParseContext {
  /** Newlines in the file before text[0]. */
  linesBefore: number;
  /** Code of the delimiter (COMMA unless detected otherwise). */
  delimiter: number;
  /** Columns marked false are returned as '' (not copied). */
  keep?: readonly boolean[] | undefined;
  /** Filled with the offset in the text where each returned record starts. */
  starts?: number[] | undefined;
}

function formatError(text: string, at: number, context: ParseContext, reason: string): ExportFormatError {
  return new ExportFormatError('CSV', context.linesBefore + 1 + countNewlines(text, 0, at), reason);
}

/**
 * Parse as many complete records as `text` holds from `start`. When `final` is false, a record that
 * may continue in the next chunk is left unconsumed.
 */
function parseCompleteRecords(text: string, start: number, final: boolean, context: ParseContext): ParseResult {
  const records: string[][] = [];
  const { keep, starts, delimiter } = context;
  const n = text.length;
  let i = start;
  while (i < n) {
    const recordStart = i;
    const fields: string[] = [];
    let complete = false;
    for (;;) {
      if (i >= n) {
        // Only reached after a delimiter: the record ends with an empty field at the end of the input.
        if (!final) break;
        fields.push('');
        complete = true;
        break;
      }
      let c = text.charCodeAt(i);
      if (c === QUOTE) {
        let j = i + 1;
        let value = '';
        let closed = false;
        for (;;) {
          const q = text.indexOf('"', j);
          if (q < 0) break;
          if (q + 1 < n && text.charCodeAt(q + 1) === QUOTE) {
            value += text.slice(j, q + 1);
            j = q + 2;
            continue;
          }
          if (q + 1 >= n && !final) break; // the next chunk may start with the second quote
          value += text.slice(j, q);
          i = q + 1;
          closed = true;
          break;
        }
        if (!closed) {
          if (!final) break;
          throw formatError(text, recordStart, context, 'a quoted field of the record starting here is not closed before the end of the file');
        }
        fields.push(keep === undefined || keep[fields.length] !== false ? value : '');
        if (i >= n) {
          if (!final) break;
          complete = true;
          break;
        }
        c = text.charCodeAt(i);
        if (c === delimiter) {
          i++;
          continue;
        }
        if (c === LF) {
          i++;
          complete = true;
          break;
        }
        if (c === CR) {
          if (i + 1 >= n && !final) break;
          i += i + 1 < n && text.charCodeAt(i + 1) === LF ? 2 : 1;
          complete = true;
          break;
        }
        throw formatError(text, recordStart, context, 'unexpected character after a closing quote');
      } else {
        let j = i;
        while (j < n) {
          c = text.charCodeAt(j);
          if (c === delimiter || c === LF || c === CR) break;
          j++;
        }
        if (j >= n) {
          if (!final) break;
          fields.push(keep === undefined || keep[fields.length] !== false ? text.slice(i, j) : '');
          i = j;
          complete = true;
          break;
        }
        fields.push(keep === undefined || keep[fields.length] !== false ? text.slice(i, j) : '');
        if (c === delimiter) {
          i = j + 1;
          continue;
        }
        if (c === LF) {
          i = j + 1;
          complete = true;
          break;
        }
        // CR
        if (j + 1 >= n && !final) break;
        i = j + 1 < n && text.charCodeAt(j + 1) === LF ? j + 2 : j + 1;
        complete = true;
        break;
      }
    }
    if (!complete) return { records, consumed: recordStart };
    if (i - recordStart > MAX_RECORD_CHARS) throw formatError(text, recordStart, context, recordTooLong('a quoted field is probably never closed'));
    if (fields.length === 1 && fields[0] === '') continue; // blank line
    starts?.push(recordStart);
    records.push(fields);
  }
  return { records, consumed: i };
}

/** Index just after the first line break outside quotes (end of the first record), or -1. */
function firstRecordEnd(text: string): number {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) quoted = !quoted;
    else if (!quoted && c === LF) return i + 1;
    else if (!quoted && c === CR && i + 1 < text.length) return text.charCodeAt(i + 1) === LF ? i + 2 : i + 1;
  }
  return -1;
}

/**
 * The delimiter of a CSV export, from its first line (the header): of the comma, semicolon, tab and
 * bar, the one that occurs most outside quotes; the comma when none does. A header names dozens of
 * columns, so the delimiter is never in doubt.
 */
export function detectCsvDelimiter(text: string): string {
  const end = firstRecordEnd(text);
  const line = end < 0 ? text : text.slice(0, end);
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && counts.has(c)) counts.set(c, (counts.get(c) as number) + 1);
  }
  let best: string = ',';
  for (const d of DELIMITERS) if ((counts.get(d) as number) > (counts.get(best) as number)) best = d;
  return best;
}

/** Parse a whole CSV text at once (comma-separated unless told). */
export function parseCsvText(text: string, delimiter = ','): string[][] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return parseCompleteRecords(body, 0, true, { linesBefore: 0, delimiter: delimiter.charCodeAt(0) }).records;
}

/**
 * The records of a piece of whole records (from readCsvRecordTexts), from `start`. `keep` marks the
 * columns to copy (the others are returned as ''); `starts`, when given, receives the offset of each
 * record in the piece's text.
 */
export function parseCsvRecords(
  piece: ExportPiece,
  start = 0,
  options: { delimiter?: string; keep?: readonly boolean[]; starts?: number[] } = {},
): string[][] {
  const context: ParseContext = { linesBefore: piece.linesBefore, delimiter: (options.delimiter ?? ',').charCodeAt(0), keep: options.keep, starts: options.starts };
  return parseCompleteRecords(piece.text, start, true, context).records;
}

/**
 * The header of a file's first piece (its first record that is not a blank line) and where the
 * records after it start; null when the piece holds no record.
 */
export function readCsvHeader(piece: ExportPiece, delimiter = ','): { header: string[]; bodyStart: number } | null {
  let start = 0;
  const text = piece.text;
  while (start < text.length) {
    const end = firstRecordEnd(text.slice(start));
    const bodyStart = end < 0 ? text.length : start + end;
    const header = parseCsvRecords({ text: text.slice(start, bodyStart), linesBefore: piece.linesBefore }, 0, { delimiter })[0];
    if (header !== undefined) return { header, bodyStart };
    start = bodyStart;
  }
  return null;
}

/**
 * Index just after the last line break of `text` outside quoted fields, or -1. A quote opens a
 * quoted field only at the start of a field (after a delimiter or a line break, or at the start of
 * the text, which starts a record), as parseCompleteRecords reads it; a doubled quote stays inside.
 */
function lastRecordEnd(text: string, delimiter: number): number {
  const opens: number[] = [];
  const closes: number[] = [];
  let q = text.indexOf('"');
  while (q >= 0) {
    const before = q === 0 ? LF : text.charCodeAt(q - 1);
    if (before !== delimiter && before !== LF && before !== CR) {
      q = text.indexOf('"', q + 1); // a quote inside an unquoted field is text
      continue;
    }
    let close = text.indexOf('"', q + 1);
    while (close >= 0 && text.charCodeAt(close + 1) === QUOTE) close = text.indexOf('"', close + 2);
    opens.push(q);
    closes.push(close < 0 ? text.length : close);
    if (close < 0) break;
    q = text.indexOf('"', close + 1);
  }
  let end = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
  for (let k = opens.length - 1; k >= 0 && end >= 0; k--) {
    if (end > (closes[k] as number)) break; // after this quoted field, so after every earlier one
    const open = opens[k] as number;
    if (end > open) end = Math.max(text.lastIndexOf('\n', open), text.lastIndexOf('\r', open));
  }
  return end < 0 ? -1 : end + 1;
}

/**
 * Cut CSV text chunks into pieces of whole records (a UTF-8 byte order mark at the start removed):
 * each piece but the last ends just after a record's line break, so that pieces can be parsed
 * apart, in any order or on other threads (parseCsvRecords). A record longer than a chunk waits for
 * the chunks that complete it, up to MAX_RECORD_CHARS: past that, it is refused with its line.
 */
export async function* readCsvRecordTexts(chunks: AsyncIterable<string> | Iterable<string>, delimiter = ','): AsyncGenerator<ExportPiece> {
  const code = delimiter.charCodeAt(0);
  let carry = '';
  let first = true;
  let linesBefore = 0;
  for await (const chunk of chunks) {
    let text = carry.length > 0 ? carry + chunk : chunk;
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    const end = lastRecordEnd(text, code);
    if (end < 0) {
      carry = text;
    } else {
      carry = text.slice(end);
      const piece = end === text.length ? text : text.slice(0, end);
      yield { text: piece, linesBefore };
      linesBefore += countNewlines(piece);
    }
    if (carry.length > MAX_RECORD_CHARS) {
      throw new ExportFormatError('CSV', linesBefore + 1, recordTooLong('a quoted field opened on this line or after it is probably never closed, or the file is not a CSV export'));
    }
  }
  if (carry.length > 0) yield { text: carry, linesBefore };
}

export interface CsvReadOptions {
  /**
   * Called with the header; fields of columns marked false are returned as '' (not copied), which
   * saves time and memory when only some columns are used.
   */
  selectColumns?: (header: readonly string[]) => readonly boolean[];
  delimiter?: string;
}

/**
 * Read CSV records from text chunks (for example a file stream with `encoding: 'utf8'`).
 * Yields one batch of complete records per piece of whole records; the first record of the first
 * batch is the header.
 */
export async function* readCsvRecordBatches(
  chunks: AsyncIterable<string> | Iterable<string>,
  options: CsvReadOptions = {},
): AsyncGenerator<string[][]> {
  const delimiter = options.delimiter ?? ',';
  let keep: readonly boolean[] | undefined;
  let headerRead = false;
  for await (const piece of readCsvRecordTexts(chunks, delimiter)) {
    let start = 0;
    if (!headerRead) {
      // Read the header alone first, so that the rest of the first piece already skips unused columns.
      const found = readCsvHeader(piece, delimiter);
      if (found === null) continue;
      keep = options.selectColumns?.(found.header);
      start = found.bodyStart;
      headerRead = true;
      yield [found.header];
    }
    const records = parseCsvRecords(piece, start, { delimiter, ...(keep !== undefined ? { keep } : {}) });
    if (records.length > 0) yield records;
  }
}

/** The byte order marks that say a file is UTF-16 (a spreadsheet's "Unicode text"), and their encodings. */
function utf16Encoding(bytes: Buffer): 'utf-16le' | 'utf-16be' | null {
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return null;
}

/**
 * Read a file as text chunks of about 1 MiB: UTF-8 (a byte order mark kept, for the readers to
 * drop), or UTF-16 when the file starts with its byte order mark. `onBytes` receives the bytes read
 * so far; `hash` (e.g. createHash('sha256')) is fed the raw bytes.
 */
export async function* readFileTextChunks(
  path: string,
  options: { onBytes?: (bytesRead: number) => void; hash?: Hash } = {},
): AsyncGenerator<string> {
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  let decode: ((bytes: Buffer) => string) | undefined;
  let finish: () => string = () => '';
  let bytesRead = 0;
  for await (const chunk of stream) {
    const bytes = chunk as Buffer;
    bytesRead += bytes.length;
    options.hash?.update(bytes);
    options.onBytes?.(bytesRead);
    if (decode === undefined) {
      const utf16 = utf16Encoding(bytes);
      if (utf16 !== null) {
        const decoder = new TextDecoder(utf16);
        decode = (b) => decoder.decode(b, { stream: true });
        finish = () => decoder.decode();
      } else {
        const decoder = new StringDecoder('utf8');
        decode = (b) => decoder.write(b);
        finish = () => decoder.end();
      }
    }
    const text = decode(bytes);
    if (text.length > 0) yield text;
  }
  const rest = finish();
  if (rest.length > 0) yield rest;
}
