/**
 * Progress of a snapshot build on stderr: a redrawn bar with the count, the rate and the time left
 * on a terminal, otherwise a line per phase and a line every few seconds.
 */
export interface ProgressReporter {
  /** Start a phase; `total` enables a percentage and the time left; `unit` names what is counted (rows, bytes). */
  phase(name: string, total?: number, unit?: string): void;
  /** `done` units so far; `rows`: the rows read so far when the unit is not rows; `total` replaces the phase's total. */
  update(done: number, rows?: number, total?: number): void;
  /** A closing line. */
  finish(message: string): void;
}

export const silentProgress: ProgressReporter = {
  phase: () => undefined,
  update: () => undefined,
  finish: () => undefined,
};

const BAR_WIDTH = 24;

const count = (n: number): string => Math.round(n).toLocaleString('en-US');

/** 95 s -> "1:35", 4000 s -> "1:06:40". */
function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

export function createProgressReporter(
  // `isTTY` is typed `boolean` but is absent on a stream that is not a terminal (a pipe, a file).
  stream: Omit<NodeJS.WriteStream, 'isTTY'> & { isTTY?: boolean } = process.stderr,
  options: { intervalMs?: number; tty?: boolean } = {},
): ProgressReporter {
  const tty = options.tty ?? stream.isTTY ?? false;
  const intervalMs = options.intervalMs ?? (tty ? 100 : 2000);
  let name = '';
  let total: number | undefined;
  let unit = '';
  let done = 0;
  let rows: number | undefined;
  let lastDraw = 0;
  let started = Date.now();
  let barShown = false;

  const text = (): string => {
    const elapsedS = (Date.now() - started) / 1000;
    const elapsed = `${elapsedS.toFixed(1)} s`;
    const counted = rows !== undefined ? `${count(rows)} rows` : `${count(done)} ${unit}`.trim();
    const rateOf = rows ?? done;
    const rate = elapsedS > 0.5 ? `, ${count(rateOf / elapsedS)} ${rows !== undefined ? 'rows' : unit}/s` : '';
    if (total === undefined || total <= 0) return `${name}: ${counted}${rate} (${elapsed})`;
    const share = Math.min(1, done / total);
    const pct = `${Math.floor(share * 100)}%`.padStart(4);
    const left = share > 0.01 && share < 1 && elapsedS > 0.5 ? `, ${duration((elapsedS * (1 - share)) / share)} left` : '';
    if (!tty) return `${name}: ${pct} ${counted}${rate}${left} (${elapsed})`;
    const filled = Math.round(share * BAR_WIDTH);
    return `${name.padEnd(22)} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${pct} ${counted}${rate}${left} (${elapsed})`;
  };
  const draw = (force: boolean): void => {
    const now = Date.now();
    if (!force && now - lastDraw < intervalMs) return;
    lastDraw = now;
    if (tty) {
      stream.write(`\r${text()}\x1b[K`);
      barShown = true;
    } else {
      stream.write(`${text()}\n`);
    }
  };
  const endBar = (): void => {
    if (tty && barShown) {
      draw(true);
      stream.write('\n');
      barShown = false;
    }
  };
  return {
    phase(phaseName, phaseTotal, phaseUnit) {
      endBar();
      name = phaseName;
      total = phaseTotal;
      unit = phaseUnit ?? '';
      done = 0;
      rows = undefined;
      started = Date.now();
      lastDraw = 0;
      if (!tty) {
        stream.write(`${name}...\n`);
        lastDraw = Date.now();
      } else draw(true);
    },
    update(value, rowsSoFar, newTotal) {
      done = value;
      if (rowsSoFar !== undefined) rows = rowsSoFar;
      if (newTotal !== undefined) total = newTotal;
      draw(false);
    },
    finish(message) {
      endBar();
      stream.write(`${message}\n`);
    },
  };
}
