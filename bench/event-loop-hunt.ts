/**
 * Hunts the data API's rare long event-loop turns: serves one snapshot as `npm start` runs it, with
 * bench/event-loop-probe.mjs (and a V8 CPU profile with --profile), runs the cases of bench/scale.ts
 * again and again, and explains each turn over 20 ms:
 *
 *   npx tsx bench/event-loop-hunt.ts --database <SQLite file | postgres://...?schema=S> [--rounds 3]
 *                                    [--seconds 3] [--dir /tmp/event-loop-hunt] [--profile]
 *                                    [--root <checkout with dist/>] [--first-year 2021] [--node-flags '...']
 *                                    [--explain-over 20] [--only 'text of the case names']
 *
 * One line per case and round: req/s, p50 / p99 ms, errors, the longest block (in brackets without
 * the wait for a core), and the count and longest pause of the scavenges and of the full
 * collections, and the longest turn of this process (the load generator: a witness that shares the
 * machine, not the service). Then each turn over 20 ms (--explain-over): its case, time on a core (and
 * of it in the kernel), wait for a core, the time the host took from the machine's cores (steal),
 * collections, requests in and answers out, the witness's longest turn that overlapped it (and its wait
 * for a core); with --profile, the functions the profile sampled in it
 * and those most often on the sampled stacks
 * (the probe's endUs and the profile's sample times are both the monotonic clock). --root serves an
 * earlier build (its dist/ built) for a before / after; --node-flags adds node options (a V8 flag
 * to try; write it `--node-flags=--flag`, since its value starts with a dash). Build first
 * (`npm run build`): the service runs from dist/.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, load, probedRequestsService, scaleCases } from './support.js';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    dir: { type: 'string', default: '/tmp/event-loop-hunt' },
    profile: { type: 'boolean', default: false },
    root: { type: 'string', default: REPO_ROOT },
    'first-year': { type: 'string', default: '2021' },
    'node-flags': { type: 'string', default: '' },
    'explain-over': { type: 'string', default: '20' },
    only: { type: 'string', default: '' },
  },
});
if (values.database === undefined) throw new Error('--database: a SQLite file or a postgres:// URL');
const KEY = 'bench-key-0123456789';
/** Turns longer than this are explained (--explain-over: lower it to see what the shorter turns are made of). */
const BLOCK_LIMIT_MS = Number(values['explain-over']);
if (!(BLOCK_LIMIT_MS > 0)) throw new Error('--explain-over: a number of milliseconds above 0');
process.env.EVENT_LOOP_PROBE_TURN_MS = String(BLOCK_LIMIT_MS);
rmSync(values.dir, { recursive: true, force: true });
mkdirSync(values.dir, { recursive: true });
const probeFile = join(values.dir, 'event-loop.txt');
// --only: the cases whose name holds that text.
const cases = scaleCases(values['first-year'], '2025').filter(([name]) => name.includes(values.only));

const service = await probedRequestsService(values.database, KEY, {
  root: values.root,
  nodeFlags: [...values['node-flags'].split(' ').filter(Boolean), ...(values.profile ? ['--cpu-prof', '--cpu-prof-dir', values.dir, '--cpu-prof-interval', '500'] : [])],
  probeFile,
});
await service.untilReady();

/** The witness's late turns: a 2 ms timer of this process, and its thread's wait for a core (schedstat). */
const WITNESS_TICK_MS = 2;
/** Witness turns at least this long are kept, to set beside the service's. */
const WITNESS_KEPT_MS = 5;
const witnessSchedstat = `/proc/${process.pid}/task/${process.pid}/schedstat`;
const witnessWaitedMs = (): number => Number(readFileSync(witnessSchedstat, 'utf8').split(' ')[1]) / 1e6;
/** Turns of the witness over WITNESS_KEPT_MS: end on the monotonic clock (µs, the probe's endUs clock), length and wait, ms. */
const witnessTurns: { endUs: number; turnMs: number; waitedMs: number }[] = [];
let witnessLongestMs = 0;
let witnessLastTick = performance.now();
let witnessLastWaited = witnessWaitedMs();
const witness = setInterval(() => {
  const now = performance.now();
  const waited = witnessWaitedMs();
  const turnMs = now - witnessLastTick - WITNESS_TICK_MS;
  witnessLongestMs = Math.max(witnessLongestMs, turnMs);
  if (turnMs >= WITNESS_KEPT_MS) witnessTurns.push({ endUs: Number(process.hrtime.bigint() / 1000n), turnMs, waitedMs: waited - witnessLastWaited });
  witnessLastTick = now;
  witnessLastWaited = waited;
}, WITNESS_TICK_MS);

/** Ends the probe's current segment (a `--` line in its log); the longest block since, all and own, ms. */
async function endSegment(): Promise<string> {
  const all = await service.longestBlock();
  const own = Number(readFileSync(`${probeFile}.own`, 'utf8')).toFixed(1);
  const pauses = JSON.parse(readFileSync(`${probeFile}.gc`, 'utf8')) as Record<string, { count: number; maxMs: number } | undefined>;
  const gc = (kind: string): string => `${pauses[kind]?.count ?? 0} / ${pauses[kind]?.maxMs ?? 0}`;
  const witnessMs = witnessLongestMs.toFixed(1);
  witnessLongestMs = 0;
  return `${all.toFixed(1)} (${own}) | ${gc('scavenge')} | ${gc('full')} | ${witnessMs}`;
}

// The start's own turns (loading, compiling) are not a request's.
await endSegment();
const segmentCase: string[] = [];
process.stdout.write(
  '| round | case | req/s | p50 / p99 ms | errors | longest block ms (own) | scavenges: count / longest ms | full collections: count / longest ms | longest turn of the load generator, ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n',
);
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, path] of cases) {
    const result = await load(name, { url: service.base, connections: 10, durationSeconds: Number(values.seconds), requests: [{ method: 'GET', path, headers: { 'x-api-key': KEY } }] });
    segmentCase.push(`${name}, round ${round + 1}`);
    const block = await endSegment();
    process.stdout.write(`| ${round + 1} | ${name} | ${result.requestsPerSecond} | ${result.p50Ms} / ${result.p99Ms} | ${result.errors + result.non2xx} | ${block} |\n`);
  }
}
// The probe's log is read before the service stops (stopping deletes it); the profile is written at its exit.
const turnsLog = readFileSync(`${probeFile}.turns`, 'utf8');
clearInterval(witness);
await service.stop();

interface Turn {
  endUs: number;
  turnMs: number;
  ranMs: number;
  kernelMs: number;
  waitedMs: number;
  stolenMs: number;
  collections: { start: number; ms: number; kind: number }[];
  requestsIn: number;
  answersOut: number;
}
interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

// The event loop's thread's profile: --cpu-prof writes one per thread, the main thread's with thread id 0.
const profileName = readdirSync(values.dir).find((name) => name.endsWith('.cpuprofile') && name.split('.')[4] === '0');
const profile = profileName === undefined ? undefined : (JSON.parse(readFileSync(join(values.dir, profileName), 'utf8')) as Profile);
const nodes = new Map(profile?.nodes.map((node) => [node.id, node]));
/** Each node's parent, to walk a sample's stack. */
const parents = new Map<number, number>();
for (const node of profile?.nodes ?? []) for (const child of node.children ?? []) parents.set(child, node.id);
const frame = (node: ProfileNode): string => `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/').slice(-2).join('/')}:${node.callFrame.lineNumber + 1}`;
const sampleTimes: number[] = [];
if (profile !== undefined) {
  let at = profile.startTime;
  for (const delta of profile.timeDeltas) sampleTimes.push((at += delta));
}

process.stdout.write(`\nTurns over ${BLOCK_LIMIT_MS} ms during the cases:\n`);
let segment = -1;
for (const line of turnsLog.split('\n')) {
  if (line === '--') segment++;
  if (line === '--' || line === '' || segment < 0) continue;
  const turn = JSON.parse(line) as Turn;
  const collections = turn.collections.map((c) => `${c.kind === 1 ? 'scavenge' : `kind ${c.kind}`} ${c.ms} ms`).join(', ') || 'none';
  const overlapping = witnessTurns
    .filter((w) => w.endUs > turn.endUs - turn.turnMs * 1000 && w.endUs - w.turnMs * 1000 < turn.endUs)
    .sort((a, b) => b.turnMs - a.turnMs)[0];
  const witnessed =
    overlapping === undefined
      ? `none of ${WITNESS_KEPT_MS} ms or more`
      : `${overlapping.turnMs.toFixed(1)} ms (${overlapping.waitedMs.toFixed(1)} waiting for a core), ending ${((overlapping.endUs - turn.endUs) / 1000).toFixed(1)} ms from the service's`;
  process.stdout.write(
    `- ${segmentCase[segment] ?? 'after the cases'}: ${turn.turnMs} ms, ${turn.ranMs} on a core (${turn.kernelMs} of it in the kernel), ${turn.waitedMs} waiting for one, ${turn.stolenMs} stolen by the host; collections: ${collections}; requests in ${turn.requestsIn}, answers out ${turn.answersOut}; the load generator's longest turn in it: ${witnessed}\n`,
  );
  if (profile === undefined) continue;
  const self = new Map<string, number>();
  const onStack = new Map<string, number>();
  let count = 0;
  sampleTimes.forEach((at, i) => {
    if (at < turn.endUs - turn.turnMs * 1000 || at > turn.endUs) return;
    const node = nodes.get(profile.samples[i] as number) as ProfileNode;
    self.set(frame(node), (self.get(frame(node)) ?? 0) + 1);
    // Each function once per sample, however deep it recurses.
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parents.get(id)) seen.add(frame(nodes.get(id) as ProfileNode));
    for (const name of seen) onStack.set(name, (onStack.get(name) ?? 0) + 1);
    count++;
  });
  process.stdout.write(`  ${count} samples (0.5 ms each); most sampled:\n`);
  for (const [name, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 8)) process.stdout.write(`    ${n} ${name}\n`);
  // What the samples were inside of: the functions on their stacks, the root left out.
  const callers = [...onStack].filter(([name]) => !name.startsWith('(root)'));
  process.stdout.write('  most often on the stack:\n');
  for (const [name, n] of callers.sort((a, b) => b[1] - a[1]).slice(0, 12)) process.stdout.write(`    ${n} ${name}\n`);
}
