/**
 * Map cells: a grid of 0.01 degree (about 1.1 km by 0.8 km in New York) over the requests'
 * locations, so that a small map box reads the requests of the few cells it touches instead of
 * walking every request in list order until its page is full (a box at sea walked them all).
 *
 * A request's cell is `map_cell`, a column the database computes from latitude and longitude (a
 * generated column, null without a location) with the same double arithmetic as `mapCellOf` here:
 * both truncate `(latitude + 90.0005) * 100` and `(longitude + 180.0005) * 100`, which grow with the degrees,
 * so every request inside a box lies in a cell between the cells of the box's corners (`boxCells`).
 * The cell column is indexed with (created_at, id) for pages in list order, and the location, which
 * the exact test of the box reads without the table.
 */

/** Cells per degree of latitude and of longitude. */
const CELLS_PER_DEGREE = 100;
/**
 * Where the grid's lines lie: half a thousandth of a degree off the hundredths, so that a box whose
 * edges have three decimals or fewer (40.67, -73.955) never lies on a line. A box edge on a line
 * touches the cells beyond it, which hold no request of the box but those exactly on the line: each
 * page would read those cells whole to find none.
 */
const GRID_OFFSET_DEGREES = 0.0005;
/** Longitude cells per row of latitude: longitudes -180 to 180 inclusive (and the offset). */
const LONGITUDE_CELLS = 360 * CELLS_PER_DEGREE + 1;

/**
 * The most cells a box is read by: a box of up to 0.08 by 0.08 degree (a neighbourhood on the
 * dashboard's map). A larger box holds many requests and fills its page on a walk in list order.
 */
export const MAX_BOX_CELLS = 64;

/** The SQL of map_cell from the row's latitude and longitude (the generated column). */
export function mapCellSql(dialect: 'sqlite' | 'postgres'): string {
  const whole = (degrees: string): string =>
    // Both are positive: truncation (SQLite's CAST) is the floor (PostgreSQL's).
    dialect === 'postgres' ? `floor((${degrees}) * ${CELLS_PER_DEGREE})::integer` : `CAST((${degrees}) * ${CELLS_PER_DEGREE} AS INTEGER)`;
  return `${whole(`latitude + ${90 + GRID_OFFSET_DEGREES}`)} * ${LONGITUDE_CELLS} + ${whole(`longitude + ${180 + GRID_OFFSET_DEGREES}`)}`;
}

/** The cell of a location, as the database computes it. */
export function mapCellOf(latitude: number, longitude: number): number {
  return Math.trunc((latitude + (90 + GRID_OFFSET_DEGREES)) * CELLS_PER_DEGREE) * LONGITUDE_CELLS + Math.trunc((longitude + (180 + GRID_OFFSET_DEGREES)) * CELLS_PER_DEGREE);
}

/** The cells a box touches, in order; null when they are more than MAX_BOX_CELLS. */
export function boxCells(box: { minLongitude: number; minLatitude: number; maxLongitude: number; maxLatitude: number }): number[] | null {
  const low = mapCellOf(box.minLatitude, box.minLongitude);
  const high = mapCellOf(box.maxLatitude, box.maxLongitude);
  const [lowRow, lowColumn] = [Math.floor(low / LONGITUDE_CELLS), low % LONGITUDE_CELLS];
  const [highRow, highColumn] = [Math.floor(high / LONGITUDE_CELLS), high % LONGITUDE_CELLS];
  if ((highRow - lowRow + 1) * (highColumn - lowColumn + 1) > MAX_BOX_CELLS) return null;
  const cells: number[] = [];
  for (let row = lowRow; row <= highRow; row += 1) {
    for (let column = lowColumn; column <= highColumn; column += 1) cells.push(row * LONGITUDE_CELLS + column);
  }
  return cells;
}
