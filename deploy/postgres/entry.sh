#!/bin/sh
# First start (empty PGDATA): a cluster with database `city`, schema `nyc311` owned by `loader`,
# and `reader`, which may only read it (SELECT, read-only transactions). Passwords from
# LOADER_PASSWORD and READER_PASSWORD (scram-sha-256 from the network; the local socket trusts
# `postgres`), read by psql from the environment (\getenv), never put on its command line. Then
# PostgreSQL in the foreground (SIGTERM: smart shutdown, SIGINT: fast).
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${LOADER_PASSWORD:?LOADER_PASSWORD is not set}" "${READER_PASSWORD:?READER_PASSWORD is not set}"
  initdb -D "$PGDATA" -U postgres -E UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  echo "host all all 0.0.0.0/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /var/run/postgresql" -w start >/dev/null
  psql -v ON_ERROR_STOP=1 -q -h /var/run/postgresql -U postgres -d postgres <<'SQL'
\getenv loader_password LOADER_PASSWORD
\getenv reader_password READER_PASSWORD
CREATE ROLE loader LOGIN PASSWORD :'loader_password';
CREATE ROLE reader LOGIN PASSWORD :'reader_password';
ALTER ROLE reader SET default_transaction_read_only = on;
CREATE DATABASE city OWNER loader;
\connect city
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
CREATE SCHEMA nyc311 AUTHORIZATION loader;
GRANT CONNECT ON DATABASE city TO reader;
GRANT USAGE ON SCHEMA nyc311 TO reader;
-- Also in the schemas the loader makes later (a refresh into a new schema: docs/deploy.md).
ALTER DEFAULT PRIVILEGES FOR ROLE loader GRANT USAGE ON SCHEMAS TO reader;
ALTER DEFAULT PRIVILEGES FOR ROLE loader GRANT SELECT ON TABLES TO reader;
SQL
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -k /var/run/postgresql
