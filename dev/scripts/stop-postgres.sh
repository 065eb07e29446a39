#!/usr/bin/env bash
# Stops a private PostgreSQL cluster started by the dev stack or the tests.
set -uo pipefail
dir=${1:?data folder}
# Under root the folder may link to the cluster's files (see
# internal/postgres): pg_ctl runs as the postgres user and needs the target.
dir=$(readlink -f "$dir" || echo "$dir")
[ -f "$dir/postmaster.pid" ] || exit 0
pg_ctl=$(ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n1)
pg_ctl=${pg_ctl:-$(command -v pg_ctl)}
if [ "$(id -u)" = 0 ]; then
  (cd / && runuser -u postgres -- "$pg_ctl" -D "$dir" -m fast -w stop >/dev/null)
else
  "$pg_ctl" -D "$dir" -m fast -w stop >/dev/null
fi
