#!/usr/bin/env bash
# Makes sure the tests can reach PostgreSQL: a server given by
# VOXGATE_TEST_DATABASE_URL, one on localhost:5432, or local PostgreSQL
# binaries the harness can start a private cluster from. When none is there
# and we run as root on Debian or Ubuntu, the binaries are installed.
set -euo pipefail

have_server() {
  if [ -n "${VOXGATE_TEST_DATABASE_URL:-}" ]; then return 0; fi
  (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null
}

have_binaries() {
  command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1 && return 0
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}

if have_server; then
  echo "postgres: a server answers"
  exit 0
fi
if have_binaries; then
  echo "postgres: no server answers; the test harness will start a private cluster from the local binaries"
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "postgres: installing the PostgreSQL server package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
  exit 0
fi
echo "postgres: none found. Install PostgreSQL (the server binaries) or set VOXGATE_TEST_DATABASE_URL." >&2
exit 1
