#!/usr/bin/env bash
# The README's test command (.ci/run: npm ci, npm run test:all, npm run test:containers) on a bare
# Debian 12 machine holding only the README's prerequisites: Node.js 20 with npm, git, Python 3.11
# with venv (no PostgreSQL, Redis or Chromium), run as root. Two phases, each ending with the
# summary lines of both commands:
#   1. a clean clone of the current commit runs .ci/run with the network (the installs happen here:
#      npm ci, the Python venvs, the Debian packages the run installs itself);
#   2. the container of phase 1 committed, run again with --network none: npm run test:all and
#      npm run test:containers from the state after the installs.
# Usage (root; installs Debian's podman, runc and mmdebstrap when missing):
#   bash scripts/test-bare-machine.sh            both phases
#   PHASES=2 bash scripts/test-bare-machine.sh   phase 2 only, from the last phase 1
#   bash scripts/test-bare-machine.sh shell [1|2] a shell in the phase 1 container or the offline one
# Work folder: BARE_MACHINE_DIR (default /work/scale-data/bare-machine, else $TMPDIR): the clone,
# the nested podman's storage (kept between runs as the cache of the image builds) and the logs
# phase-1.log and phase-2.log.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/podman-env.sh
source scripts/podman-env.sh

readonly BARE_IMAGE=localhost/city-services-bare-machine:bookworm
readonly AFTER_INSTALLS_IMAGE=localhost/city-services-bare-machine:after-installs
readonly CONTAINER=city-services-bare-machine
default_dir=/work/scale-data/bare-machine
[ -d "$(dirname "$default_dir")" ] || default_dir="${TMPDIR:-/tmp}/city-services-bare-machine"
work="${BARE_MACHINE_DIR:-$default_dir}"
phases="${PHASES:-1 2}"
mkdir -p "$work"

# The bare machine: the local Debian 12 base with Node.js (scripts/container-base.sh) plus git,
# python3 (3.11 in bookworm) and python3-venv from Debian, nothing else.
node_base="$(bash scripts/container-base.sh)"
if [ "${REBUILD:-}" = 1 ] || ! podman image exists "$BARE_IMAGE"; then
  echo "bare machine: image $BARE_IMAGE (Debian 12, Node.js, git, Python 3.11 with venv)" >&2
  printf '%s\n' 'ARG NODE_BASE' 'FROM ${NODE_BASE}' \
    'RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git python3 python3-venv >/dev/null && rm -rf /var/lib/apt/lists/* && node --version && npm --version && git --version && python3 --version' \
    'WORKDIR /root' 'CMD ["/bin/bash"]' >"$work/Containerfile"
  podman build --quiet --format docker --build-arg NODE_BASE="$node_base" -t "$BARE_IMAGE" -f "$work/Containerfile" "$work" >/dev/null
fi

# The machine's CA bundle, as behind any TLS-inspecting proxy: a copy, writable as on a real
# machine (Debian's ssl-cert, a dependency of postgresql, writes its snake-oil certificate there).
rm -rf "$work/certs"
cp -rL /etc/ssl/certs "$work/certs"

# The nested podman (npm run test:containers) keeps its images outside the committed container.
mkdir -p "$work/containers-storage"
# As a machine, not a container: privileged (the nested podman), a /dev/shm of a machine's size.
bare_options=(--privileged --shm-size 1g
  -e NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt -e PIP_CERT=/etc/ssl/certs/ca-certificates.crt
  -v "$work/certs:/etc/ssl/certs" -v "$work/containers-storage:/var/lib/containers"
  -v "$work/clone:/root/city-services" -v "$(realpath ../shared):/root/shared:ro" -w /root/city-services)
run_bare() { # image network command...
  local image=$1 network=$2
  shift 2
  podman run --rm --network "$network" "${bare_options[@]}" "$image" "$@"
}

if [ "${1:-}" = shell ]; then
  if [ "${2:-1}" = 2 ]; then run_bare "$AFTER_INSTALLS_IMAGE" none bash; else run_bare "$BARE_IMAGE" slirp4netns bash; fi
  exit
fi

summaries() { # log
  grep -E '^(total: |container tests: )' "$1" || true
}

if [[ " $phases " == *" 1 "* ]]; then
  commit="$(git rev-parse HEAD)"
  echo "bare machine: phase 1, a clean clone of $commit, .ci/run with the network" >&2
  rm -rf "$work/clone"
  git clone --quiet --no-checkout "$PWD" "$work/clone"
  git -C "$work/clone" checkout --quiet --detach "$commit"
  podman rm --force --ignore "$CONTAINER" >/dev/null
  started=$(date +%s)
  set +e
  podman run --name "$CONTAINER" --network slirp4netns "${bare_options[@]}" "$BARE_IMAGE" bash .ci/run 2>&1 \
    | tee "$work/phase-1.log"
  status=${PIPESTATUS[0]}
  set -e
  echo "bare machine: phase 1 exit $status in $(( $(date +%s) - started )) s" | tee -a "$work/phase-1.log" >&2
  podman commit --quiet "$CONTAINER" "$AFTER_INSTALLS_IMAGE" >/dev/null
  podman rm --force "$CONTAINER" >/dev/null
fi

if [[ " $phases " == *" 2 "* ]]; then
  echo "bare machine: phase 2, the state after the installs with --network none" >&2
  started=$(date +%s)
  set +e
  run_bare "$AFTER_INSTALLS_IMAGE" none bash -c 'status=0; npm run test:all || status=1; npm run test:containers || status=1; exit $status' 2>&1 \
    | tee "$work/phase-2.log"
  status=${PIPESTATUS[0]}
  set -e
  echo "bare machine: phase 2 exit $status in $(( $(date +%s) - started )) s" | tee -a "$work/phase-2.log" >&2
fi

for phase in $phases; do
  echo "phase $phase:"
  summaries "$work/phase-$phase.log"
done
