#!/usr/bin/env bash
# Create training/.venv (if absent) and install the pinned requirements. Idempotent and quiet: CI
# calls it before the tests.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/../scripts/python-venv.sh" "$here"
