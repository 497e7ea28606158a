import examples from './openapi-examples.json' with { type: 'json' };

/**
 * The documented answers of the service-request API (openapi-examples.json): taken from the synthetic
 * snapshot that `npm run snapshot` builds (seed 311) and shortened (two requests in each format of a
 * page or an export, three complaint types, two days, weeks or months, two cleaning rules). They
 * illustrate the answers; redocly lint checks each JSON one against its schema
 * (test/platform/openapi-lint.process.test.ts).
 */
export const REQUEST_EXAMPLES = examples;
