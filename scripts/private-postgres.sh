# Private PostgreSQL servers for tests: a cluster in a folder of its own, on a loopback port, trust
# authentication, superuser `postgres`, no durability (fsync off). Sourced by with-test-servers.sh
# (the test server when none answers) and by postgres-primary-and-standby.sh (the hot-standby test).
# When the run is root, the servers run as `nobody` (PostgreSQL refuses root): prefix the commands
# that touch a cluster's folder with "${pg_as_owner[@]}".

pg_as_owner=()
if [ "$(id -u)" -eq 0 ]; then pg_as_owner=(runuser -u nobody --); fi

# The bin folder of the newest installed PostgreSQL (Debian's /usr/lib/postgresql/N/bin), or nothing.
find_postgres_bin() {
  local initdb
  initdb="$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1 || true)"
  if [ -z "$initdb" ]; then initdb="$(command -v initdb || true)"; fi
  if [ -n "$initdb" ]; then dirname "$(readlink -f "$initdb")"; fi
}

# A free loopback TCP port.
free_port() {
  node -e "const s = require('node:net').createServer(); s.listen(0, '127.0.0.1', () => { process.stdout.write(String(s.address().port)); s.close(); });"
}

# init_private_postgres BIN DATA: a new cluster in DATA (which must not exist; its parent must be
# writable by the owner). Prints initdb's last line and fails when initdb does.
init_private_postgres() {
  local bin=$1 data=$2
  "${pg_as_owner[@]}" mkdir -m 700 "$data"
  "${pg_as_owner[@]}" "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$data.initdb.log" 2>&1 || {
    tail -1 "$data.initdb.log"
    return 1
  }
}

# start_private_postgres BIN DATA PORT [SETTING...]: starts the cluster of DATA on 127.0.0.1:PORT
# (its socket in DATA), each SETTING a `name=value` server setting; waits until it accepts connections.
start_private_postgres() {
  local bin=$1 data=$2 port=$3
  shift 3
  local options="-c listen_addresses=127.0.0.1 -p $port -k $data -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
  local setting
  for setting in "$@"; do options="$options -c $setting"; done
  # setsid: a Ctrl-C of the caller reaches its command, and the server is stopped by the caller only.
  setsid "${pg_as_owner[@]}" "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 -o "$options" start >/dev/null 2>&1 </dev/null
}

# stop_private_postgres BIN DATA: stops the cluster of DATA at once, if it runs.
stop_private_postgres() {
  local bin=$1 data=$2
  if [ -f "$data/postmaster.pid" ]; then "${pg_as_owner[@]}" "$bin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true; fi
}
