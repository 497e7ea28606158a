#!/usr/bin/env bash
# Property-based API tests from the OpenAPI descriptions (the reliability decisions): Schemathesis 4.x (pinned in
# tools/schemathesis/requirements.txt) against each service running in its own process on a free
# loopback port, with every default check (no server error, status codes, content types, headers and
# bodies conforming to the description, negative data rejected, positive data accepted, 405 for
# undeclared methods...), positive and negative data, in three authentication modes: a valid key
# (one of two configured keys, as during a rotation), no key, a wrong key.
#
# Usage: bash scripts/schemathesis.sh [tickets] [houses] [requests]   (default: all three)
# npm run test:schemathesis
#
# A service whose entry point src/services/<name>/main.ts is not in git yet is skipped, saying so.
# After the runs, the service gets SIGTERM and must exit 0, and its log must not contain an API key.
# Settings: SCHEMATHESIS_MAX_EXAMPLES (default 50 per operation with a valid key, a third without), SCHEMATHESIS_SEED (default fixed,
# so that CI runs are reproducible; set another value to explore), SCHEMATHESIS_REPORT_DIR (default
# .test-results: JUnit XML per service and mode, read by scripts/summarize-tests.mjs).
# Exit status: 0 when every run of every service passed, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

max_examples="${SCHEMATHESIS_MAX_EXAMPLES:-50}"
seed="${SCHEMATHESIS_SEED:-20250101}"
report_dir="${SCHEMATHESIS_REPORT_DIR:-.test-results}"
services=("$@")
if [ ${#services[@]} -eq 0 ]; then services=(tickets houses requests); fi

bash tools/schemathesis/setup.sh
mkdir -p "$report_dir"
rm -f "$report_dir"/schemathesis-*.xml

work="$(mktemp -d)"
service_pid=""
cleanup() {
  if [ -n "$service_pid" ] && kill -0 "$service_pid" 2>/dev/null; then kill -TERM "$service_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

in_git() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --error-unmatch "$1" >/dev/null 2>&1
  else
    [ -f "$1" ]
  fi
}

# The checks on the process itself (starts, exits 0 on SIGTERM, no key in its log), as one JUnit
# test per service, so that scripts/summarize-tests.mjs counts them with the Schemathesis runs.
write_process_report() { # service failed(0|1) message
  local failures_attr=0 body=""
  if [ "$2" -ne 0 ]; then failures_attr=1; body="<failure message=\"$3\"/>"; fi
  printf '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="schemathesis-process" tests="1" failures="%s" errors="0" skipped="0"><testcase name="%s: starts, no API key in its log, exits 0 on SIGTERM">%s</testcase></testsuite></testsuites>\n' \
    "$failures_attr" "$1" "$body" >"$report_dir/schemathesis-$1-process.xml"
}

random_text() { node -e "process.stdout.write(require('node:crypto').randomBytes(12).toString('hex'))"; }

# Without a valid key most operations answer 401 whatever the data: fewer examples suffice.
examples_of() { # mode
  if [ "$1" = valid-key ]; then echo "$max_examples"; else echo $(( (max_examples + 2) / 3 )); fi
}

# One Schemathesis run of a service in one authentication mode: its output in $work/SERVICE-MODE.out,
# its exit status in $work/SERVICE-MODE.status, its JUnit report in the report directory.
run_mode() { # service base_url mode
  local service="$1" base_url="$2" mode="$3" auth=() report_path status
  case "$mode" in
    valid-key) auth=(-H "X-API-Key: $new_key") ;;
    wrong-key) auth=(-H "X-API-Key: wrong-$(random_text)") ;;
    no-key) ;;
  esac
  report_path="$(cd "$report_dir" && pwd)/schemathesis-$service-$mode.xml"
  set +e
  # Run from tools/schemathesis so that Schemathesis's own cache (.schemathesis/) stays there.
  # Its report goes to a file and is printed only when the run fails: its closing line looks like
  # pytest's ("=== 1 warning in 2.08s ===") and, printed after the real runners, would read as a
  # run of no test to whoever reads the closing lines of the CI log.
  (cd tools/schemathesis && .venv/bin/schemathesis --config-file "$service.toml" run "$base_url/openapi.json" \
    "${auth[@]}" --mode all --max-examples "$(examples_of "$mode")" --seed "$seed" --no-color \
    --report junit --report-junit-path "$report_path") >"$work/$service-$mode.out" 2>&1
  status=$?
  set -e
  echo "$status" >"$work/$service-$mode.status"
}

failures=0
summary=()

for service in "${services[@]}"; do
  entry="src/services/$service/main.ts"
  if ! in_git "$entry"; then
    echo "== schemathesis: $service skipped: $entry is not in git yet"
    summary+=("$service: skipped ($entry absent)")
    continue
  fi
  old_key="st-old-$(random_text)"
  new_key="st-new-$(random_text)"
  log="$work/$service.log"
  echo "== schemathesis: starting $service"
  PORT=0 HOST=127.0.0.1 API_KEY="$old_key,$new_key" CURSOR_SECRET="st-cursor-$(random_text)" LOG_LEVEL=info \
    node --import tsx "$entry" >"$log" 2>&1 &
  service_pid=$!
  base_url=""
  for _ in $(seq 1 1200); do
    base_url="$(grep -so 'Server listening at http://127\.0\.0\.1:[0-9]*' "$log" | head -1 | sed 's/Server listening at //' || true)"
    if [ -n "$base_url" ] || ! kill -0 "$service_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if [ -z "$base_url" ]; then
    echo "$service did not start:" >&2
    cat "$log" >&2
    failures=$((failures + 1))
    summary+=("$service: did not start")
    write_process_report "$service" 1 "did not start"
    service_pid=""
    continue
  fi
  echo "   $service listens at $base_url"

  # The three modes run at once, each a Schemathesis process of its own (its generation is
  # Python-bound: one process uses about one core, and its --workers threads do not add to that).
  mode_pids=()
  for mode in valid-key no-key wrong-key; do
    echo "== schemathesis: $service, $mode (max $(examples_of "$mode") examples per operation, seed $seed)"
    run_mode "$service" "$base_url" "$mode" &
    mode_pids+=("$!")
  done
  wait "${mode_pids[@]}"
  service_failed=0
  for mode in valid-key no-key wrong-key; do
    run_output="$work/$service-$mode.out"
    status="$(cat "$work/$service-$mode.status")"
    cases_line="$(grep -A1 '^Test cases:' "$run_output" | tail -1 | sed 's/^ *//' || true)"
    if [ "$status" -ne 0 ]; then
      service_failed=1
      summary+=("$service $mode: FAILED (exit $status)")
      echo "   $mode FAILED (exit $status); Schemathesis's report:" >&2
      cat "$run_output" >&2
    else
      summary+=("$service $mode: passed (${cases_line:-no count})")
      echo "   $mode ok: ${cases_line:-no count}"
    fi
  done

  kill -TERM "$service_pid"
  set +e
  wait "$service_pid"
  exit_code=$?
  set -e
  service_pid=""
  if [ "$exit_code" -ne 0 ]; then
    echo "$service exited $exit_code after SIGTERM (expected 0)" >&2
    service_failed=1
    summary+=("$service: exit $exit_code after SIGTERM")
  fi
  # Keys are never logged: neither the configured ones nor a wrong one sent by a client.
  if grep -q -e "$old_key" -e "$new_key" -e 'wrong-[0-9a-f]\{24\}' "$log"; then
    echo "$service logged an API key:" >&2
    grep -n -e "$old_key" -e "$new_key" -e 'wrong-[0-9a-f]\{24\}' "$log" | head -5 >&2
    service_failed=1
    summary+=("$service: API key found in the log")
  fi
  process_failed=0
  if [ "$exit_code" -ne 0 ] || grep -q -e "$old_key" -e "$new_key" -e 'wrong-[0-9a-f]\{24\}' "$log"; then process_failed=1; fi
  write_process_report "$service" "$process_failed" "exit $exit_code after SIGTERM, or an API key in the log"
  failures=$((failures + service_failed))
done

echo "== schemathesis summary"
for line in "${summary[@]}"; do echo "   $line"; done
if [ "$failures" -ne 0 ]; then
  echo "schemathesis: $failures service(s) failed" >&2
  exit 1
fi
