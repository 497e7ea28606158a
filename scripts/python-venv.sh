#!/usr/bin/env bash
# Usage: scripts/python-venv.sh DIR
# Creates DIR/.venv (if absent) and installs DIR/requirements.txt (exact pins) into it. Idempotent
# and quiet: nothing is installed again while requirements.txt is unchanged (a hash stamp in the venv).
set -euo pipefail
dir="$(cd "$1" && pwd)"
venv="$dir/.venv"
python="${PYTHON:-python3.11}"
if ! command -v "$python" >/dev/null 2>&1; then python=python3; fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$dir/requirements.txt" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$dir/requirements.txt"
echo "$want" > "$stamp"
