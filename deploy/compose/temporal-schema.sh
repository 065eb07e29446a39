#!/bin/sh
# Creates Temporal's two databases when missing and sets up or upgrades
# their schemas to the admin-tools image's release: the compose file's
# temporal-schema service runs it once before the server starts, and again
# on every `docker compose up` (an upgrade of the images upgrades the
# schema first). Safe to run twice.
set -eu
: "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${SQL_PASSWORD:?}"
port="${DB_PORT:-5432}"
sql() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -u "$POSTGRES_USER" -p "$port" "$@"; }
for db in temporal temporal_visibility; do
  dir=temporal
  [ "$db" = temporal_visibility ] && dir=visibility
  sql --db "$db" create 2>/dev/null || echo "database $db exists"
  # A database with no schema yet gets its base version first.
  sql --db "$db" update-schema -d "/etc/temporal/schema/postgresql/v12/$dir/versioned" 2>/dev/null || {
    sql --db "$db" setup-schema -v 0.0
    sql --db "$db" update-schema -d "/etc/temporal/schema/postgresql/v12/$dir/versioned"
  }
done
echo "Temporal's schemas are up to date"
