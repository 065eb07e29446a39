#!/usr/bin/env bash
# Makes sure the PostgreSQL server binaries are on this machine: the dev
# stack and the tests start a private cluster from them (unless
# DATABASE_URL / TEST_DATABASE_URL point at a running server).
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing the PostgreSQL server (Debian package postgresql)..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  exit 0
fi
echo "PostgreSQL server binaries not found: install PostgreSQL (e.g. 'sudo apt-get install postgresql' or 'brew install postgresql'), or set DATABASE_URL / TEST_DATABASE_URL" >&2
exit 1
