import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The memory decisions (docs/decisions.md, "Memory") hold wherever a service is started for real:
 * every npm start script and the image run node with V8's young generation capped, its old generation at 1 GB, its
 * collections on the thread that needs them (no helper threads to wait for), and glibc's
 * allocator mapping blocks of 64 KB and more on their own.
 */
const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('the start scripts and the image set the same memory settings', () => {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  const starts = Object.entries(scripts).filter(([name]) => name === 'start' || name.startsWith('start:'));

  it('every npm start script', () => {
    expect(starts.map(([name]) => name).sort()).toEqual(['start', 'start:houses', 'start:requests', 'start:tickets']);
    for (const [name, command] of starts) expect(command, name).toMatch(/^MALLOC_MMAP_THRESHOLD_=65536 node --max-semi-space-size=4 --max-old-space-size=1024 --single-threaded-gc scripts\/start\.mjs /);
  });

  it('the image: its environment and its entry point', () => {
    expect(read('Containerfile')).toMatch(/^ENV [^]*\bMALLOC_MMAP_THRESHOLD_=65536\b/m);
    expect(read('deploy/container-entry.sh')).toContain('node_options="--max-semi-space-size=4 --max-old-space-size=1024 --single-threaded-gc"');
  });
});
