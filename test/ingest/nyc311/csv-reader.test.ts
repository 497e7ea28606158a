import { describe, expect, it } from 'vitest';
import { CsvFormatError, parseCsvRecords, parseCsvText, readCsvRecordBatches, readCsvRecordTexts } from '../../../src/ingest/nyc311/csv-reader.js';

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
    expect(() => parseCsvText('a,b\n1,"open\n')).toThrow(CsvFormatError);
    expect(() => parseCsvText('a,b\n1,"x"y\n')).toThrow(/unexpected character after a closing quote/);
  });

  it('cuts text into pieces of whole records, each parsed apart as the whole text is parsed', async () => {
    // Quotes inside unquoted fields are text; line breaks in quoted fields, doubled quotes, CRLF, CR alone.
    const text = 'h1,h2\r\nab"c,"x\ny"\r\n"q""\n",d"\r\n1,2\r3,"4\r"\n\n5,""""\n';
    const whole = parseCsvText(text);
    for (let size = 1; size <= text.length; size++) {
      const pieces: string[] = [];
      for await (const piece of readCsvRecordTexts(splitEvery(text, size))) pieces.push(piece);
      expect(pieces.join(''), `chunks of ${size}`).toBe(text);
      expect(pieces.flatMap((piece) => parseCsvRecords(piece, 0, 0)), `chunks of ${size}`).toEqual(whole);
    }
  });
});
