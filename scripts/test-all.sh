#!/usr/bin/env bash
# Every test of the project: the training pipeline (pytest), the TypeScript type check and every
# Vitest suite after the lint (ESLint and knip) (the three services, the platform, the model parity, the snapshot ingestion, the
# PostgreSQL runs, the rate limits shared through Redis, the requests dashboard in headless Chromium:
# Debian's chromium package is installed by scripts/install-chromium.sh when missing). Run after
# `npm ci` (the README's test
# command does both).
#
# Settings: SHARED_DATA_DIR (default ../shared/data: the King County CSV and the NYC 311 sample),
# TEST_DATABASE_URL, TEST_REDIS_URL and TEST_SERVERS: the whole run goes through
# scripts/with-test-servers.sh, which uses the servers given, else the defaults when they answer,
# else starts throw-away ones of its own (and stops them at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TEST_SERVERS_CHOSEN:-}" ]; then
  TEST_SERVERS_CHOSEN=1 exec bash scripts/with-test-servers.sh bash scripts/test-all.sh "$@"
fi
mkdir -p .test-results
# Each stage's heading says when it started, in seconds from the start of the run.
stage() { echo "== $1 (at ${SECONDS} s)"; }

stage "Python environment for training/ (pinned requirements)"
bash training/setup.sh

stage "pytest: training pipeline"
set +e
training/.venv/bin/python -m pytest training/tests -q -p no:cacheprovider --junitxml=.test-results/pytest.xml
pytest_status=$?
set -e
# pytest exits 5 when it collects no test: that is a failure here too.

stage "TypeScript type check"
npx tsc --noEmit

stage "Lint: ESLint (typescript-eslint strict, type-aware) and knip (unused files, exports, dependencies)"
set +e
npm run lint
lint_status=$?
set -e

stage "Chromium for the browser test of the dashboard page (installed only when missing)"
bash scripts/install-chromium.sh

stage "Vitest: services, platform, model parity, snapshot, the dashboard page in Chromium"
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=.test-results/vitest.json
vitest_status=$?
set -e

stage "Schemathesis: property-based API tests of each service from its OpenAPI description"
set +e
bash scripts/schemathesis.sh
schemathesis_status=$?
set -e

# One closing line for every runner: "N passed, N failed, N skipped" (Schemathesis: one JUnit XML
# per service and key mode, one test per API operation).
stage "every stage done"
node scripts/summarize-tests.mjs .test-results/pytest.xml .test-results/vitest.json .test-results/schemathesis-*.xml
if [ "$pytest_status" -ne 0 ] || [ "$lint_status" -ne 0 ] || [ "$vitest_status" -ne 0 ] || [ "$schemathesis_status" -ne 0 ]; then
  echo "pytest exit $pytest_status, lint exit $lint_status, vitest exit $vitest_status, schemathesis exit $schemathesis_status" >&2
  exit 1
fi
