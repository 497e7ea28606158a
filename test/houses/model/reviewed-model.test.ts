import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REVIEWED_MODEL } from '../../../src/services/houses/model/index.js';
import { parseModelFile } from '../../../src/services/houses/model/model-file.js';
import { REPO_ROOT } from './support.js';

describe('reviewed model configuration', () => {
  const bytes = readFileSync(resolve(REPO_ROOT, REVIEWED_MODEL.path));

  it('records the SHA-256 of the committed model file', () => {
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(REVIEWED_MODEL.sha256);
  });

  it('names the version inside the file, which parses', () => {
    const model = parseModelFile(bytes);
    expect(model.model_version).toBe(REVIEWED_MODEL.version);
    expect(model.card.model_version).toBe(REVIEWED_MODEL.version);
    expect(model.prices_as_of).toBe('2015-02-28');
    expect(model.card.not_for.join(' ')).toMatch(/lending, underwriting or insurance decisions about a person/);
    expect(model.card.not_for.join(' ')).toMatch(/\$1,000,000 or more/);
    expect(model.rare_value_thresholds[0]?.fields).toEqual(['sqft_lot', 'sqft_lot15']);
    expect(model.high_value_usd).toBe(1_000_000);
    expect(model.card.test.mape_pct).toBeLessThanOrEqual(12.8);
    expect(model.range.measured_test_coverage).toBeGreaterThanOrEqual(0.78);
    expect(model.range.measured_test_coverage).toBeLessThanOrEqual(0.82);
  });
});
