#!/bin/sh
# Redis for compose.yaml's rate-limit counters: clients must authenticate with REDIS_PASSWORD. The
# password reaches redis-server on its standard input (`redis-server -` reads its configuration
# there), never on a command line that `ps` or `inspect` would show; it is unset before the exec.
set -eu
password="${REDIS_PASSWORD:-}"
unset REDIS_PASSWORD
case "$password" in
  '' | *[!A-Za-z0-9._~-]*)
    echo "Invalid setting REDIS_PASSWORD: set it to letters, digits, '.', '_', '~' or '-' (openssl rand -hex 24), at least 16 of them" >&2
    exit 1
    ;;
esac
if [ "${#password}" -lt 16 ]; then
  echo "Invalid setting REDIS_PASSWORD: at least 16 characters (openssl rand -hex 24)" >&2
  exit 1
fi
exec redis-server --bind 0.0.0.0 --protected-mode yes --save '' --appendonly no --dir /tmp - <<CONFIG
requirepass "$password"
CONFIG
