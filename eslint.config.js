// ESLint: typescript-eslint's strict, type-aware rules over every TypeScript file of the project and the dashboard's type-checked script.
// Deliberate departures from `strictTypeChecked` are listed with their reason (docs/decisions.md).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The deliberate departures from `strictTypeChecked`, wherever its type-aware rules apply. */
const strictTypeCheckedDepartures = {
  // Numbers and booleans read well in messages and log lines; objects and nullish values stay errors.
  '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
  // Fastify's callback style (`(req, reply, done) => done()`) returns a void call from an arrow
  // shorthand; statement bodies and other void expressions stay errors.
  '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
  // Dropping keys with a rest pattern (`{ start: _start, ...rest }`) is the idiom for an object without them.
  '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
};

export default tseslint.config(
  // test/generated-clients/ is compiled by test/platform/generated-clients.test.ts with its own tsc program,
  // against the client types it generates from the OpenAPI copies during the test.
  { ignores: ['**/.venv/', 'dist/', 'node_modules/', 'coverage/', 'training/', '.test-results/', 'data/', 'test/generated-clients/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: strictTypeCheckedDepartures,
  },
  {
    // Tests and benchmarks read JSON answers whose shape is what they assert, and index arrays they
    // have just checked: `any` member access and non-null assertions are allowed there, not in src/.
    // The OpenAPI documents the tests walk (app.swagger()) are declared `any` for the same reason.
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  {
    // The dashboard's scripts run in the browser (served as static files), not in Node.
    files: ['src/services/requests/dashboard/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // ...and are type-checked through `// @ts-check` and JSDoc (tsconfig.json: allowJs), so the
    // type-aware rules apply to them as to the TypeScript files, with the same departures.
    files: ['src/services/requests/dashboard/*.js'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    // The rules disableTypeChecked turned off for *.js above (the others still apply to these files).
    rules: { ...tseslint.configs.strictTypeCheckedOnly.find((config) => config.name === 'typescript-eslint/strict-type-checked-only')?.rules, ...strictTypeCheckedDepartures },
  },
);
