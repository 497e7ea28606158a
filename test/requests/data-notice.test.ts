import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DATA_DESCRIPTION, dataNotice, descriptionNotice } from '../../src/services/requests/data-notice.js';
import { createSqliteFixture, fixtureDuringSuite } from './support/fixture-database.js';
import { startTestApp } from './support/requests-app.js';

const REAL_EXPORT = {
  kind: 'file',
  description: 'NYC Open Data export',
  dataset: 'erm2-nwe9',
  file_name: 'export.csv',
  sha256: 'b'.repeat(64),
  seed: null,
  generator_version: null,
  layout: 'standard-41',
  format: 'portal_csv',
  column_count: 41,
  missing_columns: [] as string[],
};

/** The data says what it is: synthetic (the default) or a real export, wherever a reader meets it. */
describe('which data the service serves', () => {
  const fixture = fixtureDuringSuite();

  it('the notice says plainly synthetic (made-up, with seed and generator) or a real export (file, SHA-256)', () => {
    const synthetic = dataNotice({ ...REAL_EXPORT, kind: 'synthetic', seed: 311, generator_version: 'g1' });
    expect(synthetic).toMatch(/^SYNTHETIC DATA: made-up records .*seed 311, generator g1.*not real NYC 311 service requests/);
    expect(dataNotice(REAL_EXPORT)).toBe(`A real export of NYC Open Data erm2-nwe9 (file export.csv, SHA-256 ${'b'.repeat(64)}), cleaned by the rules listed in cleaning_rules.`);
    expect(dataNotice({ ...REAL_EXPORT, missing_columns: ['Open Data Channel Type', 'Council District'] })).toMatch(
      /cleaned by the rules listed in cleaning_rules\. The export lacked the columns Open Data Channel Type, Council District: their fields are null in every request\.$/,
    );
  });

  it('the public OpenAPI description names a real export by its SHA-256, not its file, and shows no HTML of the metadata', () => {
    const crafted = { ...REAL_EXPORT, file_name: '/srv/private/export-<img src=x onerror=alert(1)>.csv', dataset: '<script>alert(1)</script>' };
    const notice = descriptionNotice({ snapshot_id: 'abc<b>', row_count: 12, source: crafted });
    expect(notice).toBe(`**This service serves snapshot abc?b? (12 requests).** A real export of NYC Open Data ?script?alert?1???script? (SHA-256 ${'b'.repeat(64)}), cleaned by the rules listed in cleaning_rules; GET /v1/dataset names its file.`);
    expect(notice).not.toMatch(/export-|srv|</);
    const synthetic = descriptionNotice({ snapshot_id: 'f1', row_count: 3, source: { ...REAL_EXPORT, kind: 'synthetic', seed: 311, generator_version: '1.1.0<i>' } });
    expect(synthetic).toMatch(/^\*\*This service serves snapshot f1 \(3 requests\)\.\*\* SYNTHETIC DATA: .*generator 1\.1\.0\?i\?\)/);
  });

  it('GET /v1/dataset carries the notice; the served OpenAPI description names the loaded snapshot', async () => {
    const { app, get } = await startTestApp(fixture.databaseUrl);
    const dataset = JSON.parse((await get('/v1/dataset')).body) as { notice: string; source: { kind: string }; snapshot_id: string };
    expect(dataset.source.kind).toBe('synthetic');
    expect(dataset.notice).toMatch(/^SYNTHETIC DATA: /);
    const description = ((await app.inject({ method: 'GET', url: '/openapi.json' })).json<{ info: { description: string } }>()).info.description;
    expect(description).toContain(DATA_DESCRIPTION);
    expect(description).toContain(`**This service serves snapshot ${dataset.snapshot_id} (${fixture.rows.length} requests).** ${dataset.notice}`);
    await app.close();
  });

  it("GET /v1/dataset says the layout the export was read in and the columns it lacked (all null in a snapshot built before they were recorded)", async () => {
    const { app, get } = await startTestApp(fixture.databaseUrl);
    const dataset = JSON.parse((await get('/v1/dataset')).body) as { source: Record<string, unknown> };
    expect(dataset.source).toEqual({
      kind: 'synthetic',
      description: 'hand-written test fixture in the layout of NYC Open Data erm2-nwe9',
      dataset: 'erm2-nwe9',
      file_name: 'service-requests.csv',
      sha256: 'a'.repeat(64),
      seed: 311,
      generator_version: 'fixture',
      layout: 'standard-41',
      format: 'portal_csv',
      column_count: 41,
      missing_columns: ['Council District'],
    });
    await app.close();

    const older = createSqliteFixture();
    const db = new Database(older.databaseUrl);
    for (const column of ['source_format', 'source_column_count', 'source_missing_columns']) db.exec(`ALTER TABLE snapshot_meta DROP COLUMN ${column}`);
    db.exec('UPDATE snapshot_meta SET schema_version = 3');
    db.close();
    const served = await startTestApp(older.databaseUrl);
    const source = (JSON.parse((await served.get('/v1/dataset')).body) as { source: Record<string, unknown> }).source;
    expect(source).toMatchObject({ layout: 'standard-41', format: null, column_count: null, missing_columns: null });
    await served.app.close();
    await older.drop();
  });
});
