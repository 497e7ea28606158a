#!/usr/bin/env bash
# Renders /docs and /redoc of each service in headless Chromium (Debian's `chromium` package:
# apt-get install chromium) and checks that the pages render from the service alone, with the
# content security policy on: the rendered DOM holds the operations of the OpenAPI description, and
# the browser's console reports no CSP violation other than ReDoc's footer logo, an image ReDoc
# links from its CDN, which the policy blocks (nothing is loaded from elsewhere).
# Usage: bash scripts/check-docs-in-browser.sh   (builds, starts each service on a free port, stops it)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || { echo "chromium is not installed (bash scripts/install-chromium.sh)"; exit 2; }
npx tsc -b tsconfig.build.json
status=0
check() {
  local name=$1 entry=$2 text=$3 port
  port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  PORT=$port API_KEY=browser-check-key-01 node "$entry" > /dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" > /dev/null && break; sleep 0.2; done
  for page in docs redoc; do
    local profile dom err violations
    profile=$(mktemp -d); dom=$(mktemp); err=$(mktemp)
    timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
      --enable-logging=stderr --v=0 --virtual-time-budget=8000 --dump-dom "http://127.0.0.1:$port/$page" > "$dom" 2> "$err" || true
    violations=$( { grep 'violates the following Content Security Policy' "$err" || true; } | { grep -v 'cdn.redoc.ly/redoc/logo-mini.svg' || true; } | wc -l)
    if grep -q "$text" "$dom" && [ "$violations" -eq 0 ]; then
      echo "ok   $name /$page: rendered (\"$text\" found), no CSP violation"
    else
      echo "FAIL $name /$page: rendered=$(grep -c "$text" "$dom" || true), CSP violations=$violations"
      grep 'Content Security Policy' "$err" | head -3 || true
      status=1
    fi
    rm -rf "$profile" "$dom" "$err"
  done
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
check tickets dist/src/services/tickets/main.js 'Classify a support ticket'
check houses dist/src/services/houses/main.js 'Estimate the price of one house'
check requests dist/src/services/requests/main.js 'List service requests'
exit $status
