/**
 * The machine's own floor under the event-loop figures: threads that do nothing but read the clock,
 * one per `--threads`, for `--seconds`. Every gap between two readings of at least `--over` ms is a
 * time the thread was kept off its core. Each gap is classed by the thread's involuntary context
 * switches across it (/proc/thread-self/status, read every 0.5 ms): switched out, the guest's
 * scheduler gave the core to another task; not switched out, the time was taken below the guest (an
 * interrupt, or the host holding the virtual core). Nothing here is the services' code, so a
 * gap over 20 ms here is one no service on this machine can avoid:
 *
 *   npx tsx bench/investigations/clock-gaps.ts [--threads 2] [--seconds 60] [--over 5]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { startModuleWorker } from '../../src/shared/module-worker.js';

interface Gap {
  ms: number;
  atSeconds: number;
  switchedOut: boolean;
}
interface ThreadReport {
  gaps: Gap[];
  longestMs: number;
}
/** How often the context-switch counter is read, ms: a gap's counter is from at most this long before it. */
const SAMPLE_MS = 0.5;
/** The target a turn must stay under. */
const TARGET_MS = 20;

/** The thread's involuntary context switches so far. */
function involuntarySwitches(): number {
  const status = readFileSync('/proc/thread-self/status', 'utf8');
  return Number(/nonvoluntary_ctxt_switches:\s*(\d+)/.exec(status)?.[1] ?? 0);
}

function spin(seconds: number, overMs: number): ThreadReport {
  const gaps: Gap[] = [];
  const start = performance.now();
  let previous = start;
  let sampledAt = start;
  let switches = involuntarySwitches();
  let longestMs = 0;
  while (previous - start < seconds * 1000) {
    let now = performance.now();
    const gap = now - previous;
    if (gap >= overMs) {
      const after = involuntarySwitches();
      gaps.push({ ms: gap, atSeconds: (now - start) / 1000, switchedOut: after > switches });
    }
    longestMs = Math.max(longestMs, gap);
    if (now - sampledAt >= SAMPLE_MS) {
      switches = involuntarySwitches();
      sampledAt = now = performance.now();
    }
    previous = now;
  }
  return { gaps, longestMs };
}

if (isMainThread) {
  const { values } = parseArgs({
    options: { threads: { type: 'string', default: '2' }, seconds: { type: 'string', default: '60' }, over: { type: 'string', default: '5' } },
  });
  const threads = Number(values.threads);
  const seconds = Number(values.seconds);
  const overMs = Number(values.over);
  if (!(Number.isInteger(threads) && threads > 0) || !(seconds > 0) || !(overMs > 0)) throw new Error('--threads: a whole number above 0; --seconds, --over: numbers above 0');
  const reports = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<ThreadReport>((resolve, reject) => {
          const worker = startModuleWorker(import.meta.url, 'clock-gaps', { seconds, overMs });
          worker.once('message', resolve);
          worker.once('error', reject);
        }),
    ),
  );
  process.stdout.write(
    `${threads} threads reading the clock for ${seconds} s\n\n| thread | gaps of ${overMs} ms or more | over ${TARGET_MS} ms | of them switched out | longest ms |\n|---:|---:|---:|---:|---:|\n`,
  );
  reports.forEach((report, i) => {
    const long = report.gaps.filter((gap) => gap.ms > TARGET_MS);
    process.stdout.write(`| ${i + 1} | ${report.gaps.length} | ${long.length} | ${long.filter((gap) => gap.switchedOut).length} | ${report.longestMs.toFixed(1)} |\n`);
  });
  const notSwitched = reports.flatMap((report) => report.gaps.filter((gap) => !gap.switchedOut));
  const longestNotSwitched = Math.max(0, ...notSwitched.map((gap) => gap.ms));
  process.stdout.write(`\nThe longest gap with no switch out (taken below the guest): ${longestNotSwitched.toFixed(1)} ms\n`);
  for (const [i, report] of reports.entries()) {
    for (const gap of report.gaps.filter((g) => g.ms > TARGET_MS)) {
      process.stdout.write(`- thread ${i + 1}, ${gap.atSeconds.toFixed(1)} s: ${gap.ms.toFixed(1)} ms, ${gap.switchedOut ? 'switched out' : 'not switched out'}\n`);
    }
  }
} else {
  const { seconds, overMs } = workerData as { seconds: number; overMs: number };
  parentPort?.postMessage(spin(seconds, overMs));
}
