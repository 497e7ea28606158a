import { describe, expect, it } from 'vitest';
import { detectCsvDelimiter, parseCsvRecords, parseCsvText, readCsvRecordBatches, readCsvRecordTexts } from '../../../src/ingest/nyc311/csv-reader.js';
import { type ExportPiece, ExportFormatError, MAX_RECORD_CHARS } from '../../../src/ingest/nyc311/export-format-error.js';

async function readAll(chunks: string[], selectColumns?: (header: readonly string[]) => boolean[]): Promise<string[][]> {
  const out: string[][] = [];
  for await (const batch of readCsvRecordBatches(chunks, selectColumns ? { selectColumns } : {})) out.push(...batch);
  return out;
}

function splitEvery(text: string, size: number): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return chunks;
}

const SAMPLE =
  '\uFEFFa,b,c\r\n' +
  '1,"two, with comma","three ""quoted"""\r\n' +
  '"multi\nline",,""\n' +
  '\n' +
  'x,y,z';

const EXPECTED = [
  ['a', 'b', 'c'],
  ['1', 'two, with comma', 'three "quoted"'],
  ['multi\nline', '', ''],
  ['x', 'y', 'z'],
];

describe('CSV reader (RFC 4180)', () => {
  it('reads quoted fields, doubled quotes, line breaks in quotes, CRLF, a BOM, a blank line and no final newline', () => {
    expect(parseCsvText(SAMPLE)).toEqual(EXPECTED);
  });

  it('gives the same records whatever the chunk boundaries', async () => {
    for (const size of [1, 2, 3, 5, 7, 11, 64]) {
      expect(await readAll(splitEvery(SAMPLE, size)), `chunks of ${size}`).toEqual(EXPECTED);
    }
  });

  it('keeps a trailing empty field and an empty quoted field at the end', () => {
    expect(parseCsvText('a,b\n1,\n2,""\n')).toEqual([
      ['a', 'b'],
      ['1', ''],
      ['2', ''],
    ]);
  });

  it('returns unused columns as empty text when a column mask is given', async () => {
    const text = 'keep,drop,keep2\n1,"x,y",3\n4,5,6\n';
    for (const size of [1, 4, 100]) {
      expect(await readAll(splitEvery(text, size), (header) => header.map((h) => h !== 'drop'))).toEqual([
        ['keep', 'drop', 'keep2'],
        ['1', '', '3'],
        ['4', '', '6'],
      ]);
    }
  });

  it('refuses a quoted field that is never closed, and text after a closing quote', () => {
    expect(() => parseCsvText('a,b\n1,"open\n')).toThrow(ExportFormatError);
    expect(() => parseCsvText('a,b\n1,2\n1,"open\n')).toThrow('CSV line 3: a quoted field of the record starting here is not closed before the end of the file');
    expect(() => parseCsvText('a,b\n1,"x"y\n')).toThrow('CSV line 2: unexpected character after a closing quote');
  });

  it('cuts text into pieces of whole records, each parsed apart as the whole text is parsed', async () => {
    // Quotes inside unquoted fields are text; line breaks in quoted fields, doubled quotes, CRLF, CR alone.
    const text = 'h1,h2\r\nab"c,"x\ny"\r\n"q""\n",d"\r\n1,2\r3,"4\r"\n\n5,""""\n';
    const whole = parseCsvText(text);
    for (let size = 1; size <= text.length; size++) {
      const pieces: ExportPiece[] = [];
      for await (const piece of readCsvRecordTexts(splitEvery(text, size))) pieces.push(piece);
      expect(pieces.map((piece) => piece.text).join(''), `chunks of ${size}`).toBe(text);
      expect(pieces.flatMap((piece) => parseCsvRecords(piece)), `chunks of ${size}`).toEqual(whole);
      // Each piece knows the lines before it.
      let lines = 0;
      for (const piece of pieces) {
        expect(piece.linesBefore).toBe(lines);
        lines += piece.text.split('\n').length - 1;
      }
    }
  });

  it('gives where each record starts in its piece, and the line of an error in a later piece', () => {
    const starts: number[] = [];
    expect(parseCsvRecords({ text: 'a,b\n"x\ny",z\n\nq,r\n', linesBefore: 0 }, 0, { starts })).toHaveLength(3);
    expect(starts).toEqual([0, 4, 13]);
    expect(() => parseCsvRecords({ text: '1,2\n3,"4"5\n', linesBefore: 99 })).toThrow('CSV line 101: unexpected character after a closing quote');
  });

  it('finds the delimiter a spreadsheet wrote from the header line (comma, semicolon, tab, bar)', () => {
    expect(detectCsvDelimiter('Unique Key,Created Date,"A;B"\n1;2;3')).toBe(',');
    expect(detectCsvDelimiter('Unique Key;Created Date;Agency\n')).toBe(';');
    expect(detectCsvDelimiter('Unique Key\tCreated Date\tAgency')).toBe('\t');
    expect(detectCsvDelimiter('Unique Key|Created Date|Agency\r\n')).toBe('|');
    expect(detectCsvDelimiter('Unique Key\n')).toBe(',');
    expect(parseCsvText('a;"b;c"\n1;2\n', ';')).toEqual([['a', 'b;c'], ['1', '2']]);
  });

  it('refuses a record longer than 1 MiB at once, with its line: a quote never closed does not read the rest of the file', async () => {
    const open = `a,b\n1,2\n3,"never closed\n${'x,y\n'.repeat(MAX_RECORD_CHARS / 2)}`;
    let read = 0;
    const chunks = function* (): Generator<string> {
      for (let i = 0; i < open.length; i += 65_536) {
        read += 65_536;
        yield open.slice(i, i + 65_536);
      }
    };
    const pieces = async (): Promise<void> => {
      for await (const piece of readCsvRecordTexts(chunks())) expect(piece.text.length).toBeGreaterThan(0);
    };
    await expect(pieces()).rejects.toThrow(/^CSV line 3: a record longer than 1 MiB \(1,048,576 characters\) starts here/);
    expect(read).toBeLessThan(MAX_RECORD_CHARS + 2 * 65_536);
    // A record that ends, but is longer than that, is refused too.
    expect(() => parseCsvText(`a,b\n1,"${'z'.repeat(MAX_RECORD_CHARS)}"\n`)).toThrow(/^CSV line 2: a record longer than 1 MiB/);
  });
});
