#!/usr/bin/env bash
# A private PostgreSQL primary and a hot standby streaming from it (pg_basebackup -R), for the test
# of a service that reads from a standby (test/requests/hot-standby.server.test.ts):
#   bash scripts/postgres-primary-and-standby.sh start FOLDER   prints "PRIMARY_URL STANDBY_URL"
#   bash scripts/postgres-primary-and-standby.sh stop FOLDER    stops both and deletes FOLDER
# FOLDER is made by the caller and empty. The clusters are those of private-postgres.sh (loopback,
# free ports, trust, run as `nobody` when root).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/private-postgres.sh
source scripts/private-postgres.sh

if [ $# -ne 2 ] || { [ "$1" != start ] && [ "$1" != stop ]; }; then
  echo "usage: bash scripts/postgres-primary-and-standby.sh start|stop FOLDER" >&2
  exit 2
fi
folder=$2
bin="$(find_postgres_bin)"
[ -n "$bin" ] || { echo "primary and standby: PostgreSQL is not installed (no initdb)" >&2; exit 1; }

if [ "$1" = stop ]; then
  stop_private_postgres "$bin" "$folder/standby"
  stop_private_postgres "$bin" "$folder/primary"
  rm -rf "$folder"
  exit 0
fi

chmod 755 "$folder"
if [ ${#pg_as_owner[@]} -gt 0 ]; then chown nobody "$folder"; fi
primary_port="$(free_port)"
why="$(init_private_postgres "$bin" "$folder/primary")" || { echo "primary and standby: initdb failed: $why" >&2; exit 1; }
# wal_level replica and WAL senders are PostgreSQL's defaults; initdb -A trust lets 127.0.0.1 replicate.
start_private_postgres "$bin" "$folder/primary" "$primary_port" || {
  echo "primary and standby: the primary did not start: $(tail -1 "$folder/primary/server.log")" >&2
  exit 1
}
"${pg_as_owner[@]}" "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres -D "$folder/standby" -R -X stream -c fast >"$folder/basebackup.log" 2>&1 || {
  echo "primary and standby: pg_basebackup failed: $(tail -1 "$folder/basebackup.log")" >&2
  exit 1
}
standby_port="$(free_port)"
start_private_postgres "$bin" "$folder/standby" "$standby_port" hot_standby=on || {
  echo "primary and standby: the standby did not start: $(tail -1 "$folder/standby/server.log")" >&2
  exit 1
}
echo "postgres://postgres@127.0.0.1:$primary_port/postgres postgres://postgres@127.0.0.1:$standby_port/postgres"
