import { SUMMARY_BUCKET_COLUMNS, SUMMARY_FACET_TABLE_COLUMNS } from '../../../src/snapshot/aggregate-summaries.js';

/**
 * The aggregate summaries built as the rows are written, against those built from the rows read back
 * (summaries-as-rows-pass*.test.ts): a history of three years, so that buckets and months close many
 * times, and the two tables read in full, in order.
 */
export const HISTORY = { kind: 'synthetic' as const, history: { rows: 6_000, fromYear: 2022, toYear: 2024 } };
export const BUCKETS = `SELECT ${SUMMARY_BUCKET_COLUMNS.join(', ')} FROM summary_buckets ORDER BY ${SUMMARY_BUCKET_COLUMNS.join(', ')}`;
export const FACETS = `SELECT ${SUMMARY_FACET_TABLE_COLUMNS.join(', ')} FROM summary_facets ORDER BY ${SUMMARY_FACET_TABLE_COLUMNS.join(', ')}`;
