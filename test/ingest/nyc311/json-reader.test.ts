/**
 * The JSON reader (the API's JSON and JSON Lines) and the opening of an export whatever its layout:
 * pieces of whole records whatever the chunk boundaries, keys matched by name, the refusals of a
 * file that is not an export or is cut short, each with its line, and bounded memory on a string
 * never closed.
 */
import { describe, expect, it } from 'vitest';
import { ExportFormatError, type ExportPiece, MAX_RECORD_CHARS } from '../../../src/ingest/nyc311/export-format-error.js';
import { JSON_RECORD_COLUMNS } from '../../../src/ingest/nyc311/export-columns.js';
import { openExport, PieceParser } from '../../../src/ingest/nyc311/export-reader.js';
import { JsonRecordParser, readJsonRecordTexts } from '../../../src/ingest/nyc311/json-reader.js';

function splitEvery(text: string, size: number): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return chunks;
}

async function piecesOf(chunks: Iterable<string>): Promise<ExportPiece[]> {
  const pieces: ExportPiece[] = [];
  for await (const piece of readJsonRecordTexts(chunks)) pieces.push(piece);
  return pieces;
}

/** The record texts of the pieces, with the line each starts on. */
function recordsOf(pieces: readonly ExportPiece[]): { line: number; text: string }[] {
  return pieces.flatMap((piece) => {
    const out: { line: number; text: string }[] = [];
    const bounds = piece.bounds ?? new Int32Array(0);
    for (let b = 0; b < bounds.length; b += 2) {
      const start = bounds[b] as number;
      out.push({ line: piece.linesBefore + 1 + (piece.text.slice(0, start).split('\n').length - 1), text: piece.text.slice(start, bounds[b + 1]) });
    }
    return out;
  });
}

const ARRAY = '\uFEFF[{"unique_key":"1","descriptor":"a \\"quoted\\" } brace","location":{"latitude":"40.7","longitude":"-73.9"}}\n,{"unique_key":"2","x":"back\\\\"}\n,{"unique_key":"3","nested":[{"a":[1,2]},"]"]}]\n';

describe('JSON reader: pieces of whole records', () => {
  it('cuts an array of objects into its records whatever the chunk boundaries, each with its line', async () => {
    const expected = [
      { line: 1, text: '{"unique_key":"1","descriptor":"a \\"quoted\\" } brace","location":{"latitude":"40.7","longitude":"-73.9"}}' },
      { line: 2, text: '{"unique_key":"2","x":"back\\\\"}' },
      { line: 3, text: '{"unique_key":"3","nested":[{"a":[1,2]},"]"]}' },
    ];
    for (let size = 1; size <= ARRAY.length; size += size < 20 ? 1 : 17) {
      expect(recordsOf(await piecesOf(splitEvery(ARRAY, size))), `chunks of ${size}`).toEqual(expected);
    }
  });

  it('reads JSON Lines (one object per line)', async () => {
    const lines = '{"unique_key":"1"}\n{"unique_key":"2"}\r\n\n{"unique_key":"3"}';
    expect(recordsOf(await piecesOf(splitEvery(lines, 5))).map((r) => r.line)).toEqual([1, 2, 4]);
  });

  it.each([
    ['not JSON', 'unique_key\n1\n', 'JSON line 1: not a JSON export: it starts with neither [ (an array of records) nor { (one record per line)'],
    ['an element that is not an object', '[{"a":"1"},\n"x"]', 'JSON line 2: record 2 is not a JSON object: an export in JSON is an array of objects, one per request'],
    ['text after the array', '[{"a":"1"}]\n[', 'JSON line 2: text after the end of the JSON array'],
    ['a file cut short inside a record', '[{"a":"1"},\n{"a":"2', 'JSON line 2: the file ends inside record 2, which starts here: the export is cut short, or a string is never closed. Nothing was written'],
    ['an array never closed', '[{"a":"1"},\n{"a":"2"}\n', 'JSON line 3: the JSON array is not closed (no ]): the export is cut short after 2 records. Nothing was written'],
  ])('refuses %s, with its line', async (_name, text, message) => {
    await expect(piecesOf(splitEvery(text, 3))).rejects.toThrow(new ExportFormatError('JSON', Number(/line (\d+)/.exec(message)?.[1]), message.replace(/^JSON line \d+: /, '')));
  });

  it('refuses a record longer than 1 MiB at once (a string never closed does not read the rest of the file)', async () => {
    let read = 0;
    const chunks = function* (): Generator<string> {
      yield '[{"unique_key":"1"},\n{"unique_key":"2","descriptor":"never closed';
      for (;;) {
        read += 65_536;
        yield '},{"a":"b"'.repeat(6_554);
      }
    };
    await expect(piecesOf(chunks())).rejects.toThrow(/^JSON line 2: a record longer than 1 MiB/);
    expect(read).toBeLessThan(MAX_RECORD_CHARS + 2 * 65_536);
  });
});

describe('JSON reader: records mapped onto the read columns by name', () => {
  it('gives each read column its value (null and absent: empty), numbers and objects as text, unknown keys ignored', () => {
    const parser = new JsonRecordParser();
    const text = '{"Unique_Key":61276295,"created_date":"2024-05-27T02:08:51.000","closed_date":null,"incident_zip":10033,"location":{"latitude":"40.8"},":@computed_region_x":"1"}\n{"unique_key":"2" "x":1}';
    const piece: ExportPiece = { text, linesBefore: 0, bounds: Int32Array.from([0, text.indexOf('\n'), text.indexOf('\n') + 1, text.length]) };
    const [first, second] = parser.parse(piece);
    const field = (record: string[] | undefined, column: (typeof JSON_RECORD_COLUMNS)[number]): string | undefined => record?.[JSON_RECORD_COLUMNS.indexOf(column)];
    expect(field(first, 'uniqueKey')).toBe('61276295');
    expect(field(first, 'createdDate')).toBe('2024-05-27T02:08:51.000');
    expect(field(first, 'closedDate')).toBe('');
    expect(field(first, 'incidentZip')).toBe('10033');
    expect(field(first, 'location')).toBe('{"latitude":"40.8"}');
    expect(first).toHaveLength(JSON_RECORD_COLUMNS.length);
    // A record JSON.parse refuses is one field: malformed_record leaves it out, showing its text.
    expect(second).toEqual(['not JSON: {"unique_key":"2" "x":1}']);
    expect(parser.keys()).toEqual(['Unique_Key', 'created_date', 'closed_date', 'incident_zip', 'location', ':@computed_region_x']);
    expect(JSON_RECORD_COLUMNS.filter((_, i) => parser.held[i] === 1)).toEqual(['uniqueKey', 'createdDate', 'incidentZip', 'location']);
  });
});

describe('opening an export: its layout from its content', () => {
  const open = async (text: string, size = 7): Promise<unknown> => {
    const opened = await openExport(splitEvery(text, size));
    const parser = new PieceParser(opened.format, opened.header);
    const records: string[][] = [];
    for (let next = await opened.pieces.next(); next.done !== true; next = await opened.pieces.next()) records.push(...parser.parse(next.value, []));
    return { format: opened.format, records: records.length };
  };

  it('tells the portal CSV, the API CSV, a semicolon CSV, the API JSON and JSON Lines apart', async () => {
    expect(await open('Unique Key,Created Date\n1,01/01/2025 10:00:00 AM\n')).toEqual({ format: { kind: 'portal_csv', delimiter: ',' }, records: 1 });
    expect(await open('"unique_key","created_date"\n"1","2025-01-01T10:00:00.000"\n')).toEqual({ format: { kind: 'api_csv', delimiter: ',' }, records: 1 });
    expect(await open('\uFEFFUnique Key;Created Date\r\n1;1/1/25 10:00\r\n2;1/1/25 11:00\r\n')).toEqual({ format: { kind: 'portal_csv', delimiter: ';' }, records: 2 });
    expect(await open('  \n[{"unique_key":"1"},{"unique_key":"2"}]')).toEqual({ format: { kind: 'api_json', delimiter: ',' }, records: 2 });
    expect(await open('{"unique_key":"1"}\n{"unique_key":"2"}\n')).toEqual({ format: { kind: 'json_lines', delimiter: ',' }, records: 2 });
  });

  it.each([
    ['a ZIP archive or a workbook', 'PK\u0003\u0004\u0014\u0000', /ZIP archive or a spreadsheet workbook/],
    ['gzip', '\u001f\ufffd\b\u0000', /compressed \(gzip\)/],
    ['binary data', 'Unique Key,Created\u0000Date\n', /not text: it holds NUL bytes/],
    ['an empty file', ' \n\n', /^The export is empty: no header row was found\.$/],
    ['GeoJSON', '{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"unique_key":"1"}}]}', /one JSON document holding every record \(GeoJSON/],
    ["the portal's rows.json", '{\n  "meta" : {\n    "view" : {}\n  },\n  "data" : [ ]\n}', /rows\.json with "meta" and "data"\): it is not read/],
  ])('refuses %s, saying what it is', async (_name, text, message) => {
    await expect(open(text, 3)).rejects.toThrow(message);
  });
});
