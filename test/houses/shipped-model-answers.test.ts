import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildHousesApp } from '../../src/services/houses/app.js';
import { BATCH_EXAMPLE, ESTIMATE_EXAMPLE, EXPLAIN_BATCH_EXAMPLE, EXPLAIN_EXAMPLE, MODEL_CARD_EXAMPLE } from '../../src/services/houses/openapi-example.js';
import { REVIEWED_MODEL } from '../../src/services/houses/model/index.js';
import type { Estimate, ExplainedEstimate } from '../../src/services/houses/schemas.js';
import { readHouseSettings } from '../../src/services/houses/settings.js';
import { REPO_ROOT } from '../support/http.js';
import { postJson } from './support.js';
import { appDuringSuite } from '../support/during-suite.js';

/**
 * Answers of the shipped model (the committed models/ file, by default settings), fixed in files:
 * - the golden houses (test/fixtures/houses/golden-houses.json): exact estimate, range, warnings,
 *   model version and prices date of at least 20 houses across the whole range;
 * - the OpenAPI examples (src/services/houses/openapi-example.json): the documented answers of the
 *   single and batch estimates, of the same requests explained, and the documented model card.
 * Any change fails. After a deliberate, reviewed change (a retrained model), rewrite both with
 *   UPDATE_GOLDEN=1 npx vitest run test/houses/shipped-model-answers.test.ts
 * and review the diff (then npm run openapi:update for the example in the reviewed copy).
 */
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const GOLDEN_PATH = resolve(REPO_ROOT, 'test/fixtures/houses/golden-houses.json');
const EXAMPLE_PATH = resolve(REPO_ROOT, 'src/services/houses/openapi-example.json');

interface GoldenAnswer {
  estimate_usd: number;
  range_usd: { low: number; high: number };
  model_version: string;
  prices_as_of: string;
  warnings: { code: string; fields: string[] }[];
}
interface GoldenFile {
  description: string;
  houses: { name: string; house: Record<string, unknown>; expected: GoldenAnswer | null }[];
}

function goldenAnswer(answer: Estimate): GoldenAnswer {
  return {
    estimate_usd: answer.estimate_usd,
    range_usd: answer.range_usd,
    model_version: answer.model_version,
    prices_as_of: answer.prices_as_of,
    warnings: answer.warnings.map(({ code, fields }) => ({ code, fields })),
  };
}

const app = appDuringSuite(() => buildHousesApp(readHouseSettings({}), { logger: false }));

async function answerOf(house: unknown): Promise<Estimate> {
  const response = await postJson(app, '/v1/estimates', house);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Estimate>();
}

describe('the shipped model', () => {
  it('starts by default (reviewed path and SHA-256) and is ready', async () => {
    expect((await app.inject({ url: '/ready' })).statusCode).toBe(200);
    const card = (await app.inject({ url: '/v1/model' })).json<{ model_version: string; prices_as_of: string }>();
    expect(card.model_version).toBe(REVIEWED_MODEL.version);
    expect(card.model_version).toBe('kc-hgb-drift-2015-02');
    expect(card.prices_as_of).toBe('2015-02-28');
  });
});

describe('golden houses', () => {
  const golden = JSON.parse(readFileSync(GOLDEN_PATH, 'utf8')) as GoldenFile;

  it('cover the whole range', () => {
    const houses = golden.houses;
    expect(houses.length).toBeGreaterThanOrEqual(20);
    const answers = houses.map((entry) => entry.expected);
    expect(answers.every((answer) => answer !== null)).toBe(true);
    const estimates = answers.map((answer) => answer?.estimate_usd ?? 0);
    expect(Math.min(...estimates)).toBeLessThan(250_000); // cheap
    expect(Math.max(...estimates)).toBeGreaterThanOrEqual(1_000_000); // expensive
    expect(houses.some((entry) => entry.house.waterfront === true)).toBe(true);
    expect(houses.some((entry) => Number(entry.house.yr_built) <= 1910)).toBe(true); // old
    expect(houses.some((entry) => Number(entry.house.yr_renovated) > 0)).toBe(true); // renovated
    const codes = answers.flatMap((answer) => answer?.warnings ?? []);
    expect(codes.some((warning) => warning.code === 'rare_value' && warning.fields.join() === 'sqft_lot,sqft_lot15')).toBe(true);
    expect(codes.some((warning) => warning.code === 'high_value')).toBe(true);
  });

  it('answers exactly as recorded', async () => {
    const actual = await Promise.all(golden.houses.map(async (entry) => ({ ...entry, expected: goldenAnswer(await answerOf(entry.house)) })));
    if (UPDATE) {
      writeFileSync(GOLDEN_PATH, `${JSON.stringify({ ...golden, houses: actual }, null, 2)}\n`);
      return;
    }
    for (const [index, entry] of actual.entries()) {
      expect(entry.expected, `golden house ${index}: ${entry.name}`).toEqual(golden.houses[index]?.expected);
    }
  });
});

/** The golden houses sent in one batch to `path`: the answers, checked against the golden ones. */
async function goldenBatch<T extends Estimate>(path: string): Promise<T[]> {
  const golden = JSON.parse(readFileSync(GOLDEN_PATH, 'utf8')) as GoldenFile;
  const response = await postJson(app, path, { houses: golden.houses.map((entry) => entry.house) });
  expect(response.statusCode).toBe(200);
  const { estimates } = response.json<{ estimates: T[] }>();
  expect(estimates.map(goldenAnswer)).toEqual(golden.houses.map((entry) => entry.expected));
  return estimates;
}

describe('golden houses in one batch', () => {
  it('answer exactly as one by one (the batch evaluates the trees for all houses at once)', async () => {
    await goldenBatch('/v1/estimates/batch');
  });
});

/** The request and 200 examples of a POST in the served OpenAPI description. */
function documentedExamples(path: string): { request: unknown; answer: unknown } {
  const spec = app.swagger() as { paths: Record<string, Record<string, any>> };
  const post = spec.paths[path]?.post;
  const json = (media: any) => media?.content?.['application/json']?.example;
  return { request: json(post?.requestBody), answer: json(post?.responses?.['200']) };
}

describe('golden houses explained', () => {
  it('POST /v1/estimates/explain/batch gives exactly the golden estimates, each explained and with 5 comparable sales', async () => {
    for (const answer of await goldenBatch<ExplainedEstimate>('/v1/estimates/explain/batch')) {
      const sum = answer.explanation.fields.reduce((total, field) => total + field.contribution, answer.explanation.baseline);
      expect(Math.abs(sum - answer.explanation.raw)).toBeLessThan(1e-12);
      expect(answer.comparable_sales).toHaveLength(5);
    }
  });
});

/** An answer without its explanation and comparable sales: the plain Estimate. */
function withoutExplanation({ explanation: _explanation, comparable_sales: _sales, ...estimate }: ExplainedEstimate): Estimate {
  return estimate;
}

describe('the OpenAPI examples', () => {
  it('sent to the four estimate routes return exactly the documented answers; GET /v1/model the documented card', async () => {
    const answer = await answerOf(ESTIMATE_EXAMPLE.request);
    const batch = await postJson(app, '/v1/estimates/batch', BATCH_EXAMPLE.request);
    expect(batch.statusCode, batch.body).toBe(200);
    const explained = await postJson(app, '/v1/estimates/explain', ESTIMATE_EXAMPLE.request);
    expect(explained.statusCode, explained.body).toBe(200);
    const explainedBatch = await postJson(app, '/v1/estimates/explain/batch', BATCH_EXAMPLE.request);
    expect(explainedBatch.statusCode, explainedBatch.body).toBe(200);
    const card = (await app.inject({ url: '/v1/model' })).json<Record<string, unknown>>();
    const examples = {
      estimate: { request: ESTIMATE_EXAMPLE.request, answer },
      batch: { request: BATCH_EXAMPLE.request, answer: batch.json<unknown>() },
      model_card: card,
      explain: { request: ESTIMATE_EXAMPLE.request, answer: explained.json<unknown>() },
      explain_batch: { request: BATCH_EXAMPLE.request, answer: explainedBatch.json<unknown>() },
    };
    if (UPDATE) {
      // Only the answers: the requests are the sample houses (house.ts).
      const answers = {
        estimate: { answer: examples.estimate.answer },
        batch: { answer: examples.batch.answer },
        model_card: card,
        explain: { answer: examples.explain.answer },
        explain_batch: { answer: examples.explain_batch.answer },
      };
      writeFileSync(EXAMPLE_PATH, `${JSON.stringify(answers, null, 2)}\n`);
      return;
    }
    expect(answer).toEqual(ESTIMATE_EXAMPLE.answer);
    expect(examples.batch.answer).toEqual(BATCH_EXAMPLE.answer);
    expect(card).toEqual(MODEL_CARD_EXAMPLE);
    expect(examples.explain).toEqual(EXPLAIN_EXAMPLE);
    expect(examples.explain_batch).toEqual(EXPLAIN_BATCH_EXAMPLE);
    // The explained answers hold the plain ones unchanged.
    expect(withoutExplanation(EXPLAIN_EXAMPLE.answer)).toEqual(ESTIMATE_EXAMPLE.answer);
    expect(EXPLAIN_BATCH_EXAMPLE.answer.estimates.map(withoutExplanation)).toEqual(BATCH_EXAMPLE.answer.estimates);
  });

  it('are the examples of the OpenAPI description', () => {
    expect(documentedExamples('/v1/estimates')).toEqual(ESTIMATE_EXAMPLE);
    expect(documentedExamples('/v1/estimates/batch')).toEqual(BATCH_EXAMPLE);
    expect(documentedExamples('/v1/estimates/explain')).toEqual(EXPLAIN_EXAMPLE);
    expect(documentedExamples('/v1/estimates/explain/batch')).toEqual(EXPLAIN_BATCH_EXAMPLE);
    const spec = app.swagger() as { paths: Record<string, Record<string, any>> };
    expect(spec.paths['/v1/model']?.get?.responses?.['200']?.content?.['application/json']?.example).toEqual(MODEL_CARD_EXAMPLE);
  });
});
