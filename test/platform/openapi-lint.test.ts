import { describe, expect, it } from 'vitest';
import { SERVICE_NAMES, servicesDuringSuite } from '../support/running-services.js';

/**
 * the warm-start decision, "OpenAPI descriptions that client generators love": the text of the
 * description each running service serves renders in Swagger UI and ReDoc (no HTML-like `<name>`
 * outside code spans, no pointer to a repository file, no "Default Response"); `redocly lint` of
 * the same descriptions: openapi-lint.process.test.ts.
 */
const served = servicesDuringSuite();

/** Every `description` text of a description, with where it is. */
function descriptionTexts(value: unknown, where = '#'): { where: string; text: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => descriptionTexts(item, `${where}/${index}`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => {
    if (key === 'example') return [];
    if (key === 'description' && typeof item === 'string') return [{ where, text: item }];
    return descriptionTexts(item, `${where}/${key}`);
  });
}

describe('the served OpenAPI descriptions', () => {
  for (const name of SERVICE_NAMES) {
    it(`${name}: every text renders in both docs pages and points at nothing a reader cannot open`, () => {
      const texts = descriptionTexts(served.descriptions.get(name));
      expect(texts.length).toBeGreaterThan(10);
      for (const { where, text } of texts) {
        const outsideCode = text.replace(/`[^`]*`/g, '');
        expect(outsideCode, `${where}: an HTML-like tag outside a code span`).not.toMatch(/<\/?[A-Za-z][^>]*>/);
        expect(text, `${where}: a repository file`).not.toMatch(/\b(docs|src|test)\/|\.md\b/);
        expect(text, where).not.toBe('Default Response');
      }
    });
  }
});
