/**
 * Progress of a snapshot build on stderr: a redrawn bar on a terminal, otherwise a line per phase
 * and a line every few seconds.
 */
export interface ProgressReporter {
  /** Start a phase; `total` enables a percentage. */
  phase(name: string, total?: number): void;
  update(done: number): void;
  /** A closing line. */
  finish(message: string): void;
}

export const silentProgress: ProgressReporter = {
  phase: () => undefined,
  update: () => undefined,
  finish: () => undefined,
};

const BAR_WIDTH = 30;

export function createProgressReporter(
  // `isTTY` is typed `boolean` but is absent on a stream that is not a terminal (a pipe, a file).
  stream: Omit<NodeJS.WriteStream, 'isTTY'> & { isTTY?: boolean } = process.stderr,
  options: { intervalMs?: number; tty?: boolean } = {},
): ProgressReporter {
  const tty = options.tty ?? stream.isTTY ?? false;
  const intervalMs = options.intervalMs ?? (tty ? 100 : 2000);
  let name = '';
  let total: number | undefined;
  let done = 0;
  let lastDraw = 0;
  let started = Date.now();
  let barShown = false;

  const text = (): string => {
    const elapsed = ((Date.now() - started) / 1000).toFixed(1);
    if (total === undefined || total <= 0) return `${name} (${elapsed} s)`;
    const share = Math.min(1, done / total);
    const pct = `${Math.floor(share * 100)}%`.padStart(4);
    if (!tty) return `${name}: ${pct} ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} (${elapsed} s)`;
    const filled = Math.round(share * BAR_WIDTH);
    return `${name.padEnd(22)} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${pct} ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${elapsed} s`;
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
    phase(phaseName, phaseTotal) {
      endBar();
      name = phaseName;
      total = phaseTotal;
      done = 0;
      started = Date.now();
      lastDraw = 0;
      if (!tty) {
        stream.write(`${name}...\n`);
        lastDraw = Date.now();
      } else draw(true);
    },
    update(value) {
      done = value;
      draw(false);
    },
    finish(message) {
      endBar();
      stream.write(`${message}\n`);
    },
  };
}
