import { expect } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';

/** The scrape of GET /metrics by the tests (metrics*.test.ts), with the METRICS_KEY they set. */
export const METRICS_KEY = 'metrics-key-0123456789';
export const scrapeHeaders = { authorization: `Bearer ${METRICS_KEY}` };

export async function scrape(app: PlatformApp): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: scrapeHeaders });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.body;
}

/** The value of one series, found by its name and a fragment of its labels (0 when absent). */
export function valueOf(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{`) && candidate.includes(labels));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}
