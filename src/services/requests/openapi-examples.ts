import examples from './openapi-examples.json' with { type: 'json' };

/**
 * The documented answers of the service-request API (openapi-examples.json): taken from the synthetic
 * snapshot that `npm run snapshot` builds (seed 311) and shortened (two requests, three complaint
 * types, two days, two cleaning rules). They illustrate the answers; redocly lint checks each against
 * its schema (test/platform/openapi-lint.test.ts).
 */
export const REQUEST_EXAMPLES = examples;
