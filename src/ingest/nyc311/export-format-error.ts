/**
 * What an export that cannot be read fails with: the file's format (CSV, JSON, or none when the
 * kind itself is wrong), the line where the trouble starts (the first line is 1) and why, in words.
 * The snapshot command prints its message alone (no stack trace) and exits 1.
 */
export class ExportFormatError extends Error {
  constructor(
    readonly format: 'CSV' | 'JSON' | null,
    /** The line (1 for the first) where the record or the trouble starts; null when none applies. */
    readonly line: number | null,
    readonly reason: string,
  ) {
    super(format === null && line === null ? reason : `${format ?? 'The export'}${line === null ? '' : ` line ${line}`}: ${reason}`);
    this.name = 'ExportFormatError';
  }
}

/** The most text a record may hold, in characters (UTF-16 code units): 1 MiB. A longer one is refused at once. */
export const MAX_RECORD_CHARS = 1 << 20;

/** The reason given for a record longer than MAX_RECORD_CHARS, by the kind of its probable cause. */
export function recordTooLong(cause: string): string {
  return `a record longer than 1 MiB (${MAX_RECORD_CHARS.toLocaleString('en-US')} characters) starts here, more than any record of an export holds: ${cause}. Nothing was written`;
}

/** Newlines (LF) in text[from, to). */
export function countNewlines(text: string, from = 0, to = text.length): number {
  let n = 0;
  for (let i = text.indexOf('\n', from); i >= 0 && i < to; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * A piece of an export: whole records, so that pieces can be parsed apart (on other threads). The
 * first line of the piece is line `linesBefore + 1` of the file. JSON pieces carry where each record
 * starts and ends in the text.
 */
export interface ExportPiece {
  text: string;
  linesBefore: number;
  /** JSON: each record's start and end offsets in `text`, in pairs. */
  bounds?: Int32Array;
}
