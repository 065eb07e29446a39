#!/usr/bin/env bash
# The run-everything command: Postgres, the embedded Temporal server with
# its UI, the worker and the API, on embedded defaults. Data stays in .data/.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v go >/dev/null || { echo "Go 1.26 or newer is required (https://go.dev/dl/)" >&2; exit 1; }
[ -n "${DATABASE_URL:-}" ] || ./dev/scripts/ensure-postgres.sh
go build -tags devstack -o bin/paymentsd-dev ./cmd/paymentsd
exec ./bin/paymentsd-dev dev "$@"
