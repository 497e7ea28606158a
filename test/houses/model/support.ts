import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fieldFromNumber, HOUSE_FIELDS, type House } from '../../../src/services/houses/house.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const SHARED_DATA_DIR = process.env.SHARED_DATA_DIR ?? resolve(REPO_ROOT, '../shared/data');
export const CSV_PATH = resolve(SHARED_DATA_DIR, 'kc_house_data.csv');
export const VENV_PYTHON = resolve(REPO_ROOT, 'training/.venv/bin/python');

/** The paths a test needs that are absent (empty when it can run). */
export function missing(paths: string[]): string[] {
  return paths.filter((p) => !existsSync(p));
}

export function warnSkip(what: string, absent: string[]): void {
  if (absent.length > 0) {
    console.warn(
      `SKIPPED ${what}: missing ${absent.join(', ')} (set SHARED_DATA_DIR to the folder of kc_house_data.csv; run training/setup.sh for the venv)`,
    );
  }
}

export interface CsvSale {
  row: number;
  id: string;
  date: string; // YYYY-MM-DD
  price: number;
  house: House;
}

/** kc_house_data.csv: no cell holds a comma, quoted cells are plain strings. */
export function readSales(path: string): CsvSale[] {
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');
  const header = (lines[0] ?? '').split(',');
  const col = (name: string): number => {
    const i = header.indexOf(name);
    if (i < 0) throw new Error(`CSV without column ${name}`);
    return i;
  };
  const idx = Object.fromEntries(header.map((h) => [h, col(h)]));
  return lines.slice(1).map((line, row) => {
    const cells = line.split(',').map((c) => (c.startsWith('"') ? c.slice(1, -1) : c));
    const cell = (name: string): string => cells[idx[name] as number] as string;
    const num = (name: string): number => Number(cell(name));
    const d = cell('date');
    return {
      row,
      id: cell('id'),
      date: `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}`,
      price: num('price'),
      // The CSV's columns are named like the request fields; waterfront's 1/0 read as the model reads it.
      house: Object.fromEntries(HOUSE_FIELDS.map((field) => [field, fieldFromNumber(field, num(field))])) as House,
    };
  });
}
