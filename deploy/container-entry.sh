#!/bin/sh
# The image's entry point (Containerfile). No argument: the service(s) named by SERVICE (all,
# tickets, houses, requests), started from the compiled build (no build check, nothing written).
# `snapshot [options]`: the snapshot loader (the options of npm run snapshot, e.g.
# `snapshot --database postgres://...`). `keys <command>`: the key file's command (npm run keys).
# Anything else is run as given.
# exec: Node is the container's main process and gets SIGTERM itself (finishes the requests in flight).
set -eu
node_options="--max-semi-space-size=4 --max-old-space-size=1024 --single-threaded-gc"
if [ "$#" -gt 0 ]; then
  if [ "$1" = snapshot ]; then
    shift
    exec node dist/src/ingest/nyc311/cli.js "$@"
  fi
  if [ "$1" = keys ]; then
    shift
    exec node dist/src/platform/api-keys/cli.js "$@"
  fi
  exec "$@"
fi
case "${SERVICE:-all}" in
  all) exec node $node_options dist/src/main.js ;;
  tickets | houses | requests) exec node $node_options "dist/src/services/$SERVICE/main.js" ;;
  *)
    echo "Invalid setting SERVICE: \"$SERVICE\" is not all, tickets, houses or requests" >&2
    exit 1
    ;;
esac
