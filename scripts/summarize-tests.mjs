// Prints one closing line over pytest's JUnit XML and Vitest's JSON report:
// "total: N passed, N failed, N skipped".
import { existsSync, readFileSync } from 'node:fs';

const [pytestXml, vitestJson] = process.argv.slice(2);
let passed = 0;
let failed = 0;
let skipped = 0;

if (pytestXml && existsSync(pytestXml)) {
  const xml = readFileSync(pytestXml, 'utf8');
  const suite = /<testsuite\b[^>]*>/.exec(xml)?.[0] ?? '';
  const attr = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suite)?.[1] ?? 0);
  const tests = attr('tests');
  const pyFailed = attr('failures') + attr('errors');
  const pySkipped = attr('skipped');
  passed += tests - pyFailed - pySkipped;
  failed += pyFailed;
  skipped += pySkipped;
} else {
  failed += 1;
  console.log('pytest wrote no report');
}

if (vitestJson && existsSync(vitestJson)) {
  const report = JSON.parse(readFileSync(vitestJson, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests + (report.numFailedTestSuites ?? 0);
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
} else {
  failed += 1;
  console.log('vitest wrote no report');
}

console.log(`total: ${passed} passed, ${failed} failed, ${skipped} skipped`);
