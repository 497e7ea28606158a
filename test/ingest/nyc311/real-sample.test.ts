/**
 * The real NYC Open Data sample (2022, all agencies) in $SHARED_DATA_DIR/nyc311/: with the filters
 * off, every one of its 924 rows is parsed. Skipped, with a message, when the file is absent.
 */
import { describe, expect, it } from 'vitest';
import { prepareSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { parseCsvText } from '../../../src/ingest/nyc311/csv-reader.js';
import { readFileSync } from 'node:fs';
import { REAL_SAMPLE, realSampleExists } from './fixture-paths.js';

const present = realSampleExists();
if (!present) console.warn(`real NYC 311 sample not found at ${REAL_SAMPLE} (set SHARED_DATA_DIR): its tests are skipped`);

describe.skipIf(!present)('the real NYC 311 sample (924 rows, 2022-05-01)', () => {
  it('parses every row with the filters off: none malformed, each kept or removed by a named rule', async () => {
    const { content, cleaned } = await prepareSnapshot({ kind: 'file', path: REAL_SAMPLE }, { applyFilters: false });
    expect(cleaned.rawRowsRead).toBe(924);
    expect(cleaned.layout.layout).toBe('standard-41');
    const removed = Object.fromEntries(content.meta.cleaning_rules.map((r) => [r.id, r.rows_removed]));
    expect(removed.malformed_record).toBe(0);
    expect(removed.duplicate_unique_key).toBe(0);
    expect(removed.closed_before_created).toBe(0);
    const totalRemoved = Object.values(removed).reduce((a, b) => a + b, 0);
    expect(content.rows.length + totalRemoved).toBe(924);
    // Repeated submissions here are noise complaints reported again at the same place within the hour.
    expect(removed.repeated_submission).toBe(924 - content.rows.length);
    expect(content.meta.source).toMatchObject({ kind: 'file', sha256: '73b804db3ef5690f5f7beb538bf5ca467cdbf444d1628fc336b5b0abecb6b858' });
    expect(content.meta.period_start).toBe('2022-05-01');
    expect(content.meta.period_end).toBe('2022-05-01');
    expect(content.dailyStats.filter((d) => d.borough === '*' && d.complaint_type === '*')).toEqual([
      expect.objectContaining({ day: '2022-05-01', opened: content.rows.length }),
    ]);
  });

  it('maps every row of the file to the cleaned fields', async () => {
    const records = parseCsvText(readFileSync(REAL_SAMPLE, 'utf8'));
    const header = records[0]!;
    const col = (name: string): number => header.indexOf(name);
    const { content } = await prepareSnapshot({ kind: 'file', path: REAL_SAMPLE }, { applyFilters: false });
    const byId = new Map(content.rows.map((r) => [r.id, r]));
    let checked = 0;
    for (const record of records.slice(1)) {
      const row = byId.get(Number(record[col('Unique Key')]));
      if (!row) continue;
      checked++;
      expect(row.borough).toBe(({ BRONX: 'bronx', BROOKLYN: 'brooklyn', MANHATTAN: 'manhattan', QUEENS: 'queens', 'STATEN ISLAND': 'staten_island' } as Record<string, string>)[record[col('Borough')]!] ?? null);
      expect(row.status).toBe(({ Closed: 'closed', 'In Progress': 'in_progress', Open: 'open' } as Record<string, string>)[record[col('Status')]!]);
      expect(row.channel).toBe(({ ONLINE: 'online', MOBILE: 'mobile', PHONE: 'phone', UNKNOWN: null } as Record<string, string | null>)[record[col('Open Data Channel Type')]!]);
      expect(row.closed_at === null).toBe(record[col('Closed Date')] === '');
      expect(row.created_at.startsWith('2022-05-01T0')).toBe(true);
      expect(row.council_district).toBeNull();
    }
    expect(checked).toBe(content.rows.length);
  });

  it('keeps only its 10 DOT rows when filtered to DOT without the date filter... and none with it (2022 is outside 2025)', async () => {
    const { content } = await prepareSnapshot({ kind: 'file', path: REAL_SAMPLE });
    expect(content.rows).toHaveLength(0);
    const removed = Object.fromEntries(content.meta.cleaning_rules.map((r) => [r.id, r.rows_removed]));
    expect(removed.agency_not_dot).toBe(914);
    expect(removed.created_outside_period).toBe(10);
  });
});
