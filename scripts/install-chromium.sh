#!/usr/bin/env bash
# Installs Debian's `chromium` package for the browser tests (test/requests/dashboard-page.browser.test.ts,
# scripts/check-docs-in-browser.sh), only when /usr/bin/chromium is missing: running it again does
# nothing. Needs root (or sudo) and apt-get. CHROMIUM_PATH names another browser binary to use instead.
set -euo pipefail
binary=${CHROMIUM_PATH:-/usr/bin/chromium}
if [ -x "$binary" ]; then
  echo "chromium: $binary is installed"
  exit 0
fi
if ! command -v apt-get > /dev/null; then
  echo "chromium: $binary is missing and apt-get is not available; install Chromium and set CHROMIUM_PATH" >&2
  exit 1
fi
run_as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo > /dev/null || { echo "chromium: installing needs root (or sudo)" >&2; exit 1; }
  run_as_root=(sudo)
fi
echo "chromium: installing Debian's chromium package"
"${run_as_root[@]}" apt-get update
DEBIAN_FRONTEND=noninteractive "${run_as_root[@]}" apt-get install -y --no-install-recommends chromium
"$binary" --version
