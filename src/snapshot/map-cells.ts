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

/**
 * The cell sizes of the counts per cell (GET /v1/stats/cells), in degrees: whole multiples of the
 * grid's 0.01 degree, so that a cell of any size is a square of the grid's cells (its row and column
 * are the grid cell's divided by the multiple) and is counted from `map_cell` alone.
 */
export const CELL_SIZES = ['0.01', '0.02', '0.05', '0.1', '0.2', '0.5', '1'] as const;
export type CellSize = (typeof CELL_SIZES)[number];

/** Grid cells across a cell of `size`. */
export function gridCellsAcross(size: CellSize): number {
  return Math.round(Number(size) * CELLS_PER_DEGREE);
}

/**
 * The SQL of the number of the cell of `multiple` grid cells across that holds the row whose grid cell
 * is `gridCell` (a column or expression): its row and column (the grid's, divided by the multiple)
 * in the grid's numbering. Both are positive: the integer division truncates alike on both backends.
 */
export function coarseCellSql(gridCell: string, multiple: string): string {
  return `((${gridCell}) / ${LONGITUDE_CELLS} / ${multiple}) * ${LONGITUDE_CELLS} + ((${gridCell}) % ${LONGITUDE_CELLS}) / ${multiple}`;
}

/** The cells of `multiple` grid cells across that a box touches: the first and last row and column. */
export function boxCellRange(box: { minLongitude: number; minLatitude: number; maxLongitude: number; maxLatitude: number }, multiple: number) {
  const low = mapCellOf(box.minLatitude, box.minLongitude);
  const high = mapCellOf(box.maxLatitude, box.maxLongitude);
  return {
    lowCell: low,
    highCell: high,
    rows: Math.floor(Math.floor(high / LONGITUDE_CELLS) / multiple) - Math.floor(Math.floor(low / LONGITUDE_CELLS) / multiple) + 1,
    columns: Math.floor((high % LONGITUDE_CELLS) / multiple) - Math.floor((low % LONGITUDE_CELLS) / multiple) + 1,
  };
}

/**
 * The cells of `multiple` grid cells across that a box spans, numbered 0 to `cells` - 1 (row by row):
 * `indexOf` a location inside the box (its cell as coarseCellSql computes it from the row's map cell),
 * and `cellOf` an index, the cell's number as coarseCellSql gives it.
 */
export function boxCellIndex(box: { minLongitude: number; minLatitude: number; maxLongitude: number; maxLatitude: number }, multiple: number) {
  const { lowCell, rows, columns } = boxCellRange(box, multiple);
  const firstRow = Math.floor(Math.floor(lowCell / LONGITUDE_CELLS) / multiple);
  const firstColumn = Math.floor((lowCell % LONGITUDE_CELLS) / multiple);
  return {
    cells: rows * columns,
    indexOf(latitude: number, longitude: number): number {
      const gridCell = mapCellOf(latitude, longitude);
      return (Math.floor(Math.floor(gridCell / LONGITUDE_CELLS) / multiple) - firstRow) * columns + Math.floor((gridCell % LONGITUDE_CELLS) / multiple) - firstColumn;
    },
    cellOf(index: number): number {
      return (firstRow + Math.floor(index / columns)) * LONGITUDE_CELLS + firstColumn + (index % columns);
    },
  };
}

/** Degrees rounded to the grid's precision (its lines lie on half thousandths). */
const gridDegrees = (degrees: number): number => Math.round(degrees * 10_000) / 10_000;

/**
 * The bounds [min_long, min_lat, max_long, max_lat] of the cell numbered by coarseCellSql: a row holds
 * latitudes from its south line (included) to its north one (excluded), a column longitudes likewise.
 */
export function coarseCellBounds(cell: number, multiple: number): [number, number, number, number] {
  const row = Math.floor(cell / LONGITUDE_CELLS);
  const column = cell % LONGITUDE_CELLS;
  const south = (row * multiple) / CELLS_PER_DEGREE - (90 + GRID_OFFSET_DEGREES);
  const west = (column * multiple) / CELLS_PER_DEGREE - (180 + GRID_OFFSET_DEGREES);
  const across = multiple / CELLS_PER_DEGREE;
  return [gridDegrees(west), gridDegrees(south), gridDegrees(west + across), gridDegrees(south + across)];
}
