#!/usr/bin/env bash
# Stops a private PostgreSQL cluster started by the dev stack or the tests.
set -uo pipefail
dir=${1:?data folder}
[ -f "$dir/postmaster.pid" ] || exit 0
pg_ctl=$(ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n1)
pg_ctl=${pg_ctl:-$(command -v pg_ctl)}
if [ "$(id -u)" = 0 ]; then
  runuser -u postgres -- "$pg_ctl" -D "$dir" -m fast -w stop >/dev/null
else
  "$pg_ctl" -D "$dir" -m fast -w stop >/dev/null
fi
