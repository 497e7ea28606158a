/**
 * Preloaded into a service the benches start (`node --import ./bench/event-loop-probe.mjs`), on the
 * event loop's thread only (worker threads load preloaded modules too):
 * - `$EVENT_LOOP_PROBE_FILE`: the longest event-loop block since the last SIGUSR2, in ms
 *   (perf_hooks.monitorEventLoopDelay, 1 ms resolution), written at each SIGUSR2, and the histogram reset;
 * - `$EVENT_LOOP_PROBE_FILE.own`: the same, without the time the thread waited for a core. A 2 ms timer
 *   reads the thread's scheduler figures (/proc/<pid>/task/<pid>/schedstat: time on a core, time
 *   runnable but waiting for one); how late each tick comes, less that wait, is the block of the
 *   process's own making. On a busy machine the kernel gives the core to another process (the load
 *   generator's, say): the thread had work and was not let run;
 * - `$EVENT_LOOP_PROBE_FILE.turns`: one JSON line per turn over the block limit, with its time on a
 *   core (and of it, in 10 ms steps, the time in the kernel: /proc/<pid>/task/<pid>/stat), its wait
 *   for one, the machine's steal time meanwhile (/proc/stat, every core, 10 ms
 *   steps: a virtual machine's cores taken by its host) and the collections (perf_hooks `gc`
 *   entries: start in the turn, duration, kind) that fell in it, and the HTTP requests that came in
 *   and the answers that went out during it (diagnostics_channel `http.server.request.start` and
 *   `http.server.response.finish`: a long turn of many short requests is not one long callback), and
 *   its end on the monotonic clock (endUs, the clock of a V8 CPU profile's sample times); a line
 *   `--` at each SIGUSR2.
 */
import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const TICK_MS = 2;
/** Turns longer than this are written to the turns log (EVENT_LOOP_PROBE_TURN_MS, default the target's 20 ms). */
const BLOCK_LIMIT_MS = Number(process.env.EVENT_LOOP_PROBE_TURN_MS ?? 20);
/** Collections kept to explain a long turn (the last ones: a turn is short). */
const KEPT_COLLECTIONS = 64;

const file = process.env.EVENT_LOOP_PROBE_FILE;
if (file !== undefined && isMainThread) {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const collections = [];
  /** Per kind of collection since the segment began: how many, and the longest pause (ms). */
  let pauses = {};
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      collections.push({ start: entry.startTime, ms: entry.duration, kind: entry.detail?.kind });
      if (collections.length > KEPT_COLLECTIONS) collections.shift();
      const kind = entry.detail?.kind === 1 ? 'scavenge' : entry.detail?.kind === 4 ? 'full' : 'other';
      const tally = (pauses[kind] ??= { count: 0, maxMs: 0 });
      tally.count += 1;
      tally.maxMs = Math.max(tally.maxMs, Math.round(entry.duration * 10) / 10);
    }
  }).observe({ entryTypes: ['gc'] });
  let requestsIn = 0;
  let answersOut = 0;
  subscribe('http.server.request.start', () => {
    requestsIn += 1;
  });
  subscribe('http.server.response.finish', () => {
    answersOut += 1;
  });
  const schedstat = `/proc/${process.pid}/task/${process.pid}/schedstat`;
  /** The thread's time on a core and time waiting for one since it started, ns (0 where unknown). */
  const scheduled = () => {
    try {
      const [ran, waited] = readFileSync(schedstat, 'utf8').split(' ').map(Number);
      return { ran, waited };
    } catch {
      return { ran: 0, waited: 0 };
    }
  };
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  const stat = `/proc/${process.pid}/task/${process.pid}/stat`;
  /** The thread's time in the kernel since it started, ms (stime, in 10 ms ticks, after the command name). */
  const kernelMs = () => {
    try {
      const text = readFileSync(stat, 'utf8');
      return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[12]) * 10;
    } catch {
      return 0;
    }
  };
  /** The steal time of every core since boot, ms (the eighth figure of /proc/stat's first line, in 10 ms ticks). */
  const stolenMs = () => {
    try {
      return Number(readFileSync('/proc/stat', 'utf8').slice(0, 200).split('\n')[0].trim().split(/\s+/)[8]) * 10;
    } catch {
      return 0;
    }
  };
  let ownMaxMs = 0;
  let lastTick = performance.now();
  let last = scheduled();
  let lastStolenMs = stolenMs();
  let lastKernelMs = kernelMs();
  setInterval(() => {
    const now = performance.now();
    const current = scheduled();
    const stolen = stolenMs();
    const kernel = kernelMs();
    const turnMs = now - lastTick - TICK_MS;
    const waitedMs = ms(current.waited - last.waited);
    ownMaxMs = Math.max(ownMaxMs, turnMs - waitedMs);
    if (turnMs > BLOCK_LIMIT_MS) {
      const inTurn = collections.filter((c) => c.start + c.ms > lastTick && c.start < now).map((c) => ({ ...c, start: Math.round(c.start - lastTick), ms: Math.round(c.ms * 10) / 10 }));
      // endUs: the turn's end on the monotonic clock, µs, the clock of a V8 CPU profile's samples
      // (--cpu-prof): the samples from endUs - turnMs * 1000 to endUs are the turn's.
      const endUs = Number(process.hrtime.bigint() / 1000n);
      const turn = { at: new Date().toISOString(), endUs, turnMs: Math.round(turnMs * 10) / 10, ranMs: ms(current.ran - last.ran), kernelMs: kernel - lastKernelMs, waitedMs, stolenMs: stolen - lastStolenMs, collections: inTurn, requestsIn, answersOut };
      appendFileSync(`${file}.turns`, `${JSON.stringify(turn)}\n`);
    }
    lastTick = now;
    last = current;
    lastStolenMs = stolen;
    lastKernelMs = kernel;
    requestsIn = 0;
    answersOut = 0;
  }, TICK_MS).unref();
  process.on('SIGUSR2', () => {
    appendFileSync(`${file}.turns`, '--\n');
    writeFileSync(`${file}.own`, String(Math.max(0, ownMaxMs)));
    writeFileSync(`${file}.gc`, JSON.stringify(pauses));
    pauses = {};
    writeFileSync(file, String(histogram.max / 1e6));
    histogram.reset();
    ownMaxMs = 0;
  });
}
