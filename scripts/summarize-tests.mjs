// Prints one closing line over pytest's JUnit XML, Vitest's JSON report and any further JUnit XML
// files (Schemathesis, one per service and key mode): "total: N passed, N failed, N skipped".
// Usage: node scripts/summarize-tests.mjs pytest.xml vitest.json [more.xml ...]
// (`-` for pytest.xml: a run without pytest, such as the container tests.)
import { existsSync, readFileSync } from 'node:fs';

const [pytestXml, vitestJson, ...junitXmls] = process.argv.slice(2);
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
} else if (pytestXml !== '-') {
  failed += 1;
  console.log('pytest wrote no report');
}

if (vitestJson && existsSync(vitestJson)) {
  const report = JSON.parse(readFileSync(vitestJson, 'utf8'));
  passed += report.numPassedTests;
  // A file that fails outside its tests (an import, a hook) fails none of them: count it once.
  // (numFailedTestSuites also counts every describe block around a failed test.)
  const filesFailedOutsideTests = (report.testResults ?? []).filter(
    (file) => file.status === 'failed' && !(file.assertionResults ?? []).some((test) => test.status === 'failed'),
  ).length;
  failed += report.numFailedTests + filesFailedOutsideTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
} else {
  failed += 1;
  console.log('vitest wrote no report');
}

// Further JUnit reports (a pattern that matched nothing arrives unexpanded and is skipped).
for (const path of junitXmls) {
  if (!existsSync(path)) continue;
  const xml = readFileSync(path, 'utf8');
  for (const suite of xml.match(/<testsuite\b[^>]*>/g) ?? []) {
    const attr = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suite)?.[1] ?? 0);
    const suiteFailed = attr('failures') + attr('errors');
    const suiteSkipped = attr('skipped');
    passed += attr('tests') - suiteFailed - suiteSkipped;
    failed += suiteFailed;
    skipped += suiteSkipped;
  }
}

console.log(`total: ${passed} passed, ${failed} failed, ${skipped} skipped`);
