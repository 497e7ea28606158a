#!/usr/bin/env bash
# Create tools/schemathesis/.venv (if absent) and install the pinned requirements (Schemathesis 4.x).
# Idempotent and quiet: scripts/schemathesis.sh calls it before every run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/../../scripts/python-venv.sh" "$here"
