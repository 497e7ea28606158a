/**
 * A streaming CSV reader (RFC 4180): fields separated by commas, records by LF or CRLF, fields
 * optionally enclosed in double quotes, a double quote inside a quoted field written twice, commas
 * and line breaks allowed inside quoted fields. A UTF-8 byte order mark at the start is ignored,
 * blank lines are skipped. Records are returned in batches (one batch per input chunk) so that the
 * caller pays one async step per chunk, not per row.
 */
import type { Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

export class CsvFormatError extends Error {
  /** The record's number in the file, the header being record 1. */
  readonly record: number;
  /** What is wrong with it. */
  readonly reason: string;
  constructor(record: number, reason: string) {
    super(`CSV record ${record}: ${reason}`);
    this.name = 'CsvFormatError';
    this.record = record;
    this.reason = reason;
  }
}

interface ParseResult {
  records: string[][];
  /** Index of the first character not consumed (start of an incomplete record). */
  consumed: number;
}

/**
 * Parse as many complete records as `text` holds from `start`. When `final` is false, a record that
 * may continue in the next chunk is left unconsumed.
 */
function parseCompleteRecords(
  text: string,
  start: number,
  final: boolean,
  recordOffset: number,
  keep?: readonly boolean[],
): ParseResult {
  const records: string[][] = [];
  const n = text.length;
  let i = start;
  while (i < n) {
    const recordStart = i;
    const fields: string[] = [];
    let complete = false;
    for (;;) {
      if (i >= n) {
        // Only reached after a comma: the record ends with an empty field at the end of the input.
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
          throw new CsvFormatError(recordOffset + records.length + 1, 'a quoted field is not closed before the end of the file');
        }
        fields.push(keep === undefined || keep[fields.length] !== false ? value : '');
        if (i >= n) {
          if (!final) break;
          complete = true;
          break;
        }
        c = text.charCodeAt(i);
        if (c === COMMA) {
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
        throw new CsvFormatError(recordOffset + records.length + 1, 'unexpected character after a closing quote');
      } else {
        let j = i;
        while (j < n) {
          c = text.charCodeAt(j);
          if (c === COMMA || c === LF || c === CR) break;
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
        if (c === COMMA) {
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
    if (fields.length === 1 && fields[0] === '') continue; // blank line
    records.push(fields);
  }
  return { records, consumed: i };
}

export interface CsvReadOptions {
  /**
   * Called with the header; fields of columns marked false are returned as '' (not copied), which
   * saves time and memory when only some columns are used.
   */
  selectColumns?: (header: readonly string[]) => readonly boolean[];
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

/** Parse a whole CSV text at once. */
export function parseCsvText(text: string): string[][] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return parseCompleteRecords(body, 0, true, 0).records;
}

/**
 * The records of a piece of whole records (from readCsvRecordTexts), from `start`; `recordsBefore`
 * (the records of the file before the piece) numbers the records in a CsvFormatError.
 */
export function parseCsvRecords(piece: string, start: number, recordsBefore: number, keep?: readonly boolean[]): string[][] {
  return parseCompleteRecords(piece, start, true, recordsBefore, keep).records;
}

/**
 * The header of a file's first piece (its first record that is not a blank line) and where the
 * records after it start; null when the piece holds no record.
 */
export function readCsvHeader(piece: string): { header: string[]; bodyStart: number } | null {
  let start = 0;
  while (start < piece.length) {
    const end = firstRecordEnd(piece.slice(start));
    const bodyStart = end < 0 ? piece.length : start + end;
    const header = parseCompleteRecords(piece.slice(start, bodyStart), 0, true, 0).records[0];
    if (header !== undefined) return { header, bodyStart };
    start = bodyStart;
  }
  return null;
}

/**
 * Index just after the last line break of `text` outside quoted fields, or -1. A quote opens a
 * quoted field only at the start of a field (after a comma or a line break, or at the start of the
 * text, which starts a record), as parseCompleteRecords reads it; a doubled quote stays inside.
 */
function lastRecordEnd(text: string): number {
  const opens: number[] = [];
  const closes: number[] = [];
  let q = text.indexOf('"');
  while (q >= 0) {
    const before = q === 0 ? LF : text.charCodeAt(q - 1);
    if (before !== COMMA && before !== LF && before !== CR) {
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
 * the chunks that complete it.
 */
export async function* readCsvRecordTexts(chunks: AsyncIterable<string> | Iterable<string>): AsyncGenerator<string> {
  let carry = '';
  let first = true;
  for await (const chunk of chunks) {
    let text = carry.length > 0 ? carry + chunk : chunk;
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    const end = lastRecordEnd(text);
    if (end < 0) {
      carry = text;
      continue;
    }
    carry = text.slice(end);
    yield end === text.length ? text : text.slice(0, end);
  }
  if (carry.length > 0) yield carry;
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
  let recordCount = 0;
  let keep: readonly boolean[] | undefined;
  let headerRead = options.selectColumns === undefined;
  for await (const piece of readCsvRecordTexts(chunks)) {
    let start = 0;
    if (!headerRead) {
      // Read the header alone first, so that the rest of the first piece already skips unused columns.
      const found = readCsvHeader(piece);
      if (found === null) continue;
      keep = options.selectColumns?.(found.header);
      start = found.bodyStart;
      recordCount = 1;
      headerRead = true;
      yield [found.header];
    }
    const records = parseCsvRecords(piece, start, recordCount, keep);
    recordCount += records.length;
    if (records.length > 0) yield records;
  }
}

/**
 * Read a file as UTF-8 text chunks of about 1 MiB. `onBytes` receives the bytes read so far;
 * `hash` (e.g. createHash('sha256')) is fed the raw bytes.
 */
export async function* readFileTextChunks(
  path: string,
  options: { onBytes?: (bytesRead: number) => void; hash?: Hash } = {},
): AsyncGenerator<string> {
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  const decoder = new StringDecoder('utf8');
  let bytesRead = 0;
  for await (const chunk of stream) {
    const bytes = chunk as Buffer;
    bytesRead += bytes.length;
    options.hash?.update(bytes);
    options.onBytes?.(bytesRead);
    const text = decoder.write(bytes);
    if (text.length > 0) yield text;
  }
  const rest = decoder.end();
  if (rest.length > 0) yield rest;
}
