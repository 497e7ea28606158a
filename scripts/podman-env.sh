# Sourced by the container scripts: installs Debian's podman, runc and mmdebstrap when missing
# (apt-get, as root), and names deploy/podman/containers.conf in CONTAINERS_CONF when it is unset.
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v mmdebstrap >/dev/null; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "containers: podman, runc and mmdebstrap are needed (Debian's packages; installing them needs root and apt-get)" >&2
    exit 1
  fi
  echo "containers: installing Debian's podman, runc and mmdebstrap" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      podman runc mmdebstrap uidmap netavark aardvark-dns fuse-overlayfs slirp4netns iptables; } >&2
fi
CONTAINERS_CONF="${CONTAINERS_CONF:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/deploy/podman/containers.conf}"
export CONTAINERS_CONF
