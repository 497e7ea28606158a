/**
 * Preloaded into a service the scale bench starts (`node --import ./bench/event-loop-probe.mjs`): the
 * longest event-loop block of the process (perf_hooks.monitorEventLoopDelay, 1 ms resolution) since
 * the last SIGUSR2, written in ms to $EVENT_LOOP_PROBE_FILE at each SIGUSR2, and the histogram reset.
 */
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.EVENT_LOOP_PROBE_FILE;
if (file !== undefined) {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  process.on('SIGUSR2', () => {
    writeFileSync(file, String(histogram.max / 1e6));
    histogram.reset();
  });
}
