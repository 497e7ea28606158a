#!/usr/bin/env bash
# Runs a command with a PostgreSQL and a Redis server for the tests, exported to it as
# TEST_DATABASE_URL and TEST_REDIS_URL. scripts/test-all.sh runs under it; so can one suite:
#   bash scripts/with-test-servers.sh npx vitest run test/requests/service-requests-api.server.test.ts
#
# For each server, in this order:
#   1. TEST_DATABASE_URL / TEST_REDIS_URL given: that server, which must answer.
#   2. Otherwise the default (postgres://postgres@127.0.0.1:5432/test, redis://127.0.0.1:6379) when it
#      answers.
#   3. Otherwise a throw-away server of its own: Debian's `postgresql` / `redis-server` package is
#      installed first when missing (apt-get, as root or with sudo, services not started by the
#      install), then started in a temporary folder on a free loopback port with no persistence
#      (PostgreSQL: initdb, fsync off, superuser `postgres`, database `test`; Redis: no RDB, no AOF),
#      as the user `nobody` when the run is root. Both are stopped and their folders deleted when
#      the command ends, fails or is interrupted (Ctrl-C, SIGTERM).
# A server that cannot be had stops the run before the command, with one line naming it and why.
# TEST_SERVERS=own skips step 2 (start own servers even when the defaults answer: to try step 3 on
# a machine that runs them).
# The exit status is the command's (130 after Ctrl-C, 143 after SIGTERM).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/private-postgres.sh
source scripts/private-postgres.sh

if [ $# -eq 0 ]; then
  echo "usage: bash scripts/with-test-servers.sh <command> [arguments...]" >&2
  exit 2
fi
case "${TEST_SERVERS:-}" in
  '' | own) ;;
  *) echo "test servers: TEST_SERVERS must be unset or 'own', not '${TEST_SERVERS}'" >&2; exit 2 ;;
esac

readonly DEFAULT_DATABASE_URL='postgres://postgres@127.0.0.1:5432/test'
readonly DEFAULT_REDIS_URL='redis://127.0.0.1:6379'
work=""
pg_data=""
pg_bin=""
redis_pid=""
command_pid=""
as_owner=()

stop_servers() {
  if [ -n "$command_pid" ] && kill -0 "$command_pid" 2>/dev/null; then
    kill -TERM "$command_pid" 2>/dev/null || true
    wait "$command_pid" 2>/dev/null || true
  fi
  if [ -n "$pg_data" ]; then stop_private_postgres "$pg_bin" "$pg_data"; fi
  if [ -n "$redis_pid" ] && kill -0 "$redis_pid" 2>/dev/null; then
    kill -TERM "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  if [ -n "$work" ]; then rm -rf "$work"; fi
}
trap stop_servers EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() { # server why
  echo "test servers: $1 cannot be had: $2" >&2
  exit 1
}

answers() { # postgres|redis url; prints the reason when it does not answer
  node scripts/check-test-server.mjs "$1" "$2"
}

run_as_root=()
if [ "$(id -u)" -ne 0 ]; then run_as_root=(sudo); fi

install_debian_package() { # package
  if ! command -v apt-get >/dev/null; then
    return 1
  fi
  if [ ${#run_as_root[@]} -gt 0 ] && ! command -v sudo >/dev/null; then
    echo "installing $1 needs root (or sudo)"
    return 1
  fi
  echo "test servers: installing Debian's $1 package" >&2
  # The package's own service is not started: exit status 101 of policy-rc.d means "not now".
  local policy=/usr/sbin/policy-rc.d placed=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${run_as_root[@]}" tee "$policy" >/dev/null
    "${run_as_root[@]}" chmod 755 "$policy"
    placed=1
  fi
  local status=0
  { "${run_as_root[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${run_as_root[@]}" apt-get install -y -qq --no-install-recommends "$1"; } >&2 || status=$?
  if [ "$placed" -eq 1 ]; then "${run_as_root[@]}" rm -f "$policy"; fi
  return "$status"
}

make_work_folder() {
  if [ -n "$work" ]; then return; fi
  work="$(mktemp -d "${TMPDIR:-/tmp}/city-services-test-servers.XXXXXX")"
  chmod 755 "$work"
  if [ "$(id -u)" -eq 0 ]; then
    # PostgreSQL refuses to run as root; Redis needs no root either.
    command -v runuser >/dev/null || fail "PostgreSQL" "the run is root and runuser (util-linux) is missing"
    as_owner=(runuser -u nobody --)
    chown nobody "$work"
  fi
}

start_own_postgres() {
  pg_bin="$(find_postgres_bin)"
  if [ -z "$pg_bin" ]; then
    install_debian_package postgresql || fail "PostgreSQL" "initdb is not installed and Debian's postgresql package could not be installed"
    pg_bin="$(find_postgres_bin)"
    [ -n "$pg_bin" ] || fail "PostgreSQL" "initdb is still missing after installing Debian's postgresql package"
  fi
  make_work_folder
  local port
  port="$(free_port)"
  pg_data="$work/postgres"
  local why
  why="$(init_private_postgres "$pg_bin" "$pg_data")" || fail "PostgreSQL" "initdb failed: $why"
  start_private_postgres "$pg_bin" "$pg_data" "$port" || fail "PostgreSQL" "the server did not start: $(tail -1 "$pg_data/server.log" 2>/dev/null)"
  "${as_owner[@]}" "$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U postgres test >/dev/null \
    || fail "PostgreSQL" "createdb test failed"
  TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/test"
  echo "test servers: PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') of its own at $TEST_DATABASE_URL" >&2
}

start_own_redis() {
  local binary
  binary="$(command -v redis-server || true)"
  if [ -z "$binary" ]; then
    install_debian_package redis-server || fail "Redis" "redis-server is not installed and Debian's redis-server package could not be installed"
    binary="$(command -v redis-server || true)"
    [ -n "$binary" ] || fail "Redis" "redis-server is still missing after installing Debian's redis-server package"
  fi
  make_work_folder
  local port
  port="$(free_port)"
  "${as_owner[@]}" mkdir "$work/redis"
  setsid "${as_owner[@]}" "$binary" --bind 127.0.0.1 --port "$port" --dir "$work/redis" --save '' --appendonly no \
    --daemonize no --logfile "$work/redis/server.log" </dev/null 2>/dev/null &
  redis_pid=$!
  TEST_REDIS_URL="redis://127.0.0.1:$port"
  local reason=""
  for _ in $(seq 1 100); do
    if reason="$(answers redis "$TEST_REDIS_URL")"; then
      echo "test servers: Redis $("$binary" --version | awk '{print $3}' | sed 's/^v=//') of its own at $TEST_REDIS_URL" >&2
      return
    fi
    kill -0 "$redis_pid" 2>/dev/null || break
    sleep 0.1
  done
  fail "Redis" "the server did not start: ${reason:-no answer} $(tail -1 "$work/redis/server.log" 2>/dev/null)"
}

choose() { # postgres|redis name variable default start-function
  local kind=$1 name=$2 variable=$3 default=$4 start=$5 reason
  if [ -n "${!variable:-}" ]; then
    reason="$(answers "$kind" "${!variable}")" || fail "$name" "$variable does not answer: $reason"
    echo "test servers: $name from $variable" >&2
  elif [ "${TEST_SERVERS:-}" != own ] && answers "$kind" "$default" >/dev/null; then
    printf -v "$variable" '%s' "$default"
    echo "test servers: $name at the default ${default}" >&2
  else
    "$start"
  fi
  export "${variable?}"
}

choose postgres PostgreSQL TEST_DATABASE_URL "$DEFAULT_DATABASE_URL" start_own_postgres
choose redis Redis TEST_REDIS_URL "$DEFAULT_REDIS_URL" start_own_redis

# In the background and waited for, so that SIGTERM and Ctrl-C reach the traps at once.
set +e
"$@" &
command_pid=$!
wait "$command_pid"
status=$?
command_pid=""
exit "$status"
