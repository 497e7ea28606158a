#!/usr/bin/env bash
# The container tests (test/container/): the image built with podman on a base made from Debian's
# packages, run alone (health, one request per service, non-root, read-only root, a tampered model
# refused, SIGTERM finishing a request in flight), then the compose.yaml set (a cursor of one
# replica accepted by the other, one rate-limit budget across both, a replica killed while a client
# pages on through the proxy). Its own command, as it costs more than the rest when nothing is
# cached (the base and image builds, about 10 minutes on 2 cores; a few seconds when cached):
#   npm run test:containers        (.ci/run runs it after npm run test:all)
# Root with apt-get (installs podman, runc, mmdebstrap when missing; podman-compose from PyPI into
# tools/podman-compose/.venv). Ends with "total: N passed, N failed, N skipped" and its time.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
mkdir -p .test-results
# shellcheck source=scripts/podman-env.sh
source scripts/podman-env.sh

echo "== Container images (cached by podman; REBUILD=1 makes the base again)"
base="$(bash scripts/container-base.sh)"
debian=localhost/city-services-debian:bookworm
build=(podman build --quiet --format docker)
"${build[@]}" --build-arg BASE="$base" -v /etc/ssl/certs:/etc/ssl/certs:ro \
  --build-arg NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt -t localhost/city-services:test -f Containerfile . >/dev/null
for image in haproxy:2.6 postgres:15 redis:7; do
  "${build[@]}" --build-arg DEBIAN="$debian" -t "localhost/city-services-$image" "deploy/${image%%:*}" >/dev/null
done
bash scripts/python-venv.sh tools/podman-compose

echo "== Vitest: test/container"
set +e
CONTAINER_TESTS=1 IMAGE=localhost/city-services:test PODMAN_COMPOSE="$PWD/tools/podman-compose/.venv/bin/podman-compose" \
  npx vitest run test/container --reporter=default --reporter=json --outputFile.json=.test-results/vitest-containers.json
status=$?
set -e
node scripts/summarize-tests.mjs - .test-results/vitest-containers.json
echo "container tests: $(( $(date +%s) - started )) s, images included"
exit "$status"
