import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ITEMS_PER_SERIALIZED_STEP, serializeInSteps } from '../../src/services/requests/answers/etag-caching.js';
import { DailyStat, DailyStatList, GroupOthers, GroupStat, GroupStatList } from '../../src/services/requests/schemas.js';

/** Daily numbers of `count` days from 2016-01-01 on, with every kind of value the schema allows. */
function dailyNumbers(count: number): { items: Record<string, unknown>[] } {
  const first = Date.UTC(2016, 0, 1);
  return {
    items: Array.from({ length: count }, (_, i) => ({
      date: new Date(first + i * 86_400_000).toISOString().slice(0, 10),
      opened: i % 7,
      closed_within_14_days: i % 5,
      share_closed_within_14_days: i % 7 === 0 ? null : (i % 5) / (i % 7),
      median_days_to_close: i % 3 === 0 ? null : i / 100,
      complete: i % 11 !== 0,
    })),
  };
}

/** serializeInSteps with a route's serializer (response schema `response`, its components `schemas`) gives the body the route sends. */
async function expectRouteText(schemas: readonly { $id: string }[], response: object, answer: unknown): Promise<void> {
  const app = Fastify();
  for (const schema of schemas) app.addSchema(schema);
  let stepped = '';
  app.get('/answer', { schema: { response: { 200: response } } }, async (_request, reply) => {
    stepped = await serializeInSteps(answer, (part) => reply.serialize(part) as string);
    return answer;
  });
  const sent = await app.inject('/answer');
  await app.close();
  expect(sent.statusCode).toBe(200);
  expect(stepped).toBe(sent.body);
}

describe('answers serialized in steps (years of days, the rows of groups)', () => {
  it('gives the text of one call at every size around the step', async () => {
    const step = ITEMS_PER_SERIALIZED_STEP;
    for (const count of [0, 1, step - 1, step, step + 1, 2 * step, 3 * step + 7]) {
      const answer = dailyNumbers(count);
      expect(await serializeInSteps(answer, JSON.stringify)).toBe(JSON.stringify(answer));
    }
  });

  it('serves other work between steps: one serialization per step, plus the empty envelope', async () => {
    const answer = dailyNumbers(3 * ITEMS_PER_SERIALIZED_STEP + 1);
    const calls: number[] = [];
    let otherWorkRan = false;
    setImmediate(() => (otherWorkRan = true));
    const text = await serializeInSteps(answer, (part) => {
      calls.push((part as { items: unknown[] }).items.length);
      if (calls.length === 2) expect(otherWorkRan).toBe(false);
      return JSON.stringify(part);
    });
    expect(otherWorkRan).toBe(true);
    expect(calls).toEqual([0, ITEMS_PER_SERIALIZED_STEP, ITEMS_PER_SERIALIZED_STEP, ITEMS_PER_SERIALIZED_STEP, 1]);
    expect(JSON.parse(text)).toEqual(answer);
  });

  it('serializes a short list, and an answer without a list, in one call', async () => {
    for (const answer of [dailyNumbers(ITEMS_PER_SERIALIZED_STEP), { field: 'borough', items: 'not a list' }, null, [1, 2]]) {
      let calls = 0;
      const text = await serializeInSteps(answer, (part) => {
        calls += 1;
        return JSON.stringify(part);
      });
      expect(calls).toBe(1);
      expect(text).toBe(JSON.stringify(answer));
    }
  });

  it('an answer with more than its list (other fields, another list) gives the text of one call, its other list serialized once', async () => {
    const others = dailyNumbers(40).items;
    const answer = { field: 'borough', ...dailyNumbers(2 * ITEMS_PER_SERIALIZED_STEP + 3), others, next_cursor: null };
    let othersSerialized = 0;
    const text = await serializeInSteps(answer, (part) => {
      if ((part as { others: unknown[] }).others.length > 0) othersSerialized += 1;
      return JSON.stringify(part);
    });
    expect(text).toBe(JSON.stringify(answer));
    expect(othersSerialized).toBe(1);
  });

  it("gives the route serializer's own text for ten years of daily numbers (DailyStatList)", async () => {
    await expectRouteText([DailyStat], DailyStatList, dailyNumbers(3653));
  });

  it("gives the route serializer's own text for rows of groups beside their others (GroupStatList)", async () => {
    const numbers = { opened: 3, closed: 2, closed_within_14_days: 1, share_closed_within_14_days: 0.3333, median_days_to_close: 1.5, p90_days_to_close: null };
    await expectRouteText([GroupStat, GroupOthers], GroupStatList, {
      items: Array.from({ length: 4 * ITEMS_PER_SERIALIZED_STEP + 5 }, (_, i) => ({ key: { borough: i % 3 === 0 ? null : `b${i % 5}`, incident_zip: String(10_000 + (i % 97)) }, period: `2025-${String(1 + (i % 12)).padStart(2, '0')}`, ...numbers })),
      others: Array.from({ length: 12 }, (_, i) => ({ period: `2025-${String(1 + i).padStart(2, '0')}`, ...numbers })),
    });
  });
});
