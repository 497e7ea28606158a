/** The two ways a scan counts a grouping, for tests that ask both for the same groups (group-scan.ts, group-value-counts.ts). */
import type { ValueCounted } from '../../../src/services/requests/engine/group-value-counts.js';

/** Every grouping recorded. */
export const RECORDED: ValueCounted = { cellsMaximum: 0, rowsPerCellMinimum: 0 };
/** Every grouping of up to 256 cells counted by value, however few its rows. */
export const COUNTED_BY_VALUE: ValueCounted = { cellsMaximum: 256, rowsPerCellMinimum: 0 };
