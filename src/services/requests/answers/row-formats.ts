import { SERVICE_REQUEST_COLUMNS, type ServiceRequestRecord } from '../store/service-request-store.js';

/**
 * The list in CSV and GeoJSON besides JSON: the formats, how a request chooses one (a `format`
 * parameter, else its Accept header), and each row's text in each.
 */
export type RowFormat = 'json' | 'csv' | 'geojson';

export const MEDIA_TYPES: Record<RowFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  geojson: 'application/geo+json; charset=utf-8',
};

const FORMAT_OF_MEDIA_TYPE: Readonly<Record<string, RowFormat>> = {
  'application/json': 'json',
  'text/csv': 'csv',
  'application/geo+json': 'geojson',
};

/**
 * The format of an answer: the `format` parameter when given; else the first media type of the Accept
 * header, by quality, that is one of `offered` (`*` + `/*` takes the fallback); else the fallback. An
 * Accept header naming only other types gets the fallback too (no 406: the format is documented).
 */
export function chooseFormat<F extends RowFormat>(parameter: F | undefined, accept: string | undefined, offered: readonly F[], fallback: F): F {
  if (parameter !== undefined) return parameter;
  if (accept === undefined || accept === '') return fallback;
  const ranges = accept
    .split(',')
    .map((part, position) => {
      const [type = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
      const q = parameters.find((piece) => piece.startsWith('q='));
      return { type, quality: q === undefined ? 1 : Number(q.slice(2)) || 0, position };
    })
    .filter((range) => range.quality > 0)
    .sort((a, b) => b.quality - a.quality || a.position - b.position);
  for (const range of ranges) {
    if (range.type === '*/*') return fallback;
    const format = FORMAT_OF_MEDIA_TYPE[range.type] as F | undefined;
    if (format !== undefined && offered.includes(format)) return format;
  }
  return fallback;
}

/** What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection"): `=`, `+`, `-`, `@`, TAB, CR. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A text cell as a spreadsheet will show it, never run it: a text that begins like a formula gets a
 * leading `'` (OWASP's rule; docs/requests.md, "Safe CSV"). Only text is touched: numbers (ids,
 * council district, coordinates, days to close) are written as they are, a negative one included, and
 * the dates (`YYYY-MM-DDTHH:MM:SS`) and enumerations never begin with one of those characters.
 */
function safeCsvText(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled; null is empty. */
function csvField(value: ServiceRequestRecord[keyof ServiceRequestRecord] | undefined): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? safeCsvText(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The header row: the contract's field names in its order, CRLF-terminated. */
export const CSV_HEADER = `${SERVICE_REQUEST_COLUMNS.join(',')}\r\n`;

/** One request as a CSV record, CRLF-terminated. */
export function csvRecordOf(row: ServiceRequestRecord): string {
  return `${SERVICE_REQUEST_COLUMNS.map((column) => csvField(row[column])).join(',')}\r\n`;
}

/**
 * One request as a GeoJSON Feature: a Point at [longitude, latitude] (RFC 7946), a null geometry when
 * the request has no location; every field of the request in `properties`, in the contract's order
 * (the row's JSON text, serialized-rows.ts): the Feature is its head, that text and `}`.
 */
export function featureOf(row: ServiceRequestRecord): string {
  const properties: Record<string, unknown> = {};
  for (const column of SERVICE_REQUEST_COLUMNS) properties[column] = row[column] ?? null;
  return `${featureHeadOf(row)}${JSON.stringify(properties)}}`;
}

/** A Feature up to its properties: `{"type":"Feature","id":..,"geometry":..,"properties":`. */
export function featureHeadOf(row: ServiceRequestRecord): string {
  const geometry =
    row.latitude === null || row.longitude === null ? null : { type: 'Point', coordinates: [row.longitude, row.latitude] };
  return `{"type":"Feature","id":${JSON.stringify(row.id)},"geometry":${JSON.stringify(geometry)},"properties":`;
}

export const FEATURE_COLLECTION_START = '{"type":"FeatureCollection","features":[';
