#!/usr/bin/env bash
# The test command: installs what a fresh machine lacks, then runs every
# test against a real PostgreSQL and an embedded Temporal server.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v go >/dev/null || { echo "Go 1.26 or newer is required (https://go.dev/dl/)" >&2; exit 1; }
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  ./dev/scripts/ensure-postgres.sh
  trap './dev/scripts/stop-postgres.sh .data/test-postgres' EXIT
fi
# The hosted checkout page's browser test drives Debian's Chromium.
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing Chromium for the browser test (Debian package chromium)..." >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || true
fi
# The Redis rate limit store is tested against redis-server, which the
# tests start on a port of their own (no service is needed).
if ! command -v redis-server >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing the Redis server for the rate limit tests (Debian package redis-server)..." >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null || true
fi
# Formatting, vet and the linters are `make lint`, which CI runs first.
# Every package runs under the race detector but the ones under tests/:
# they link the embedded Temporal server (its -race build alone takes most
# of an hour on a small machine), or run `make dev` in a clean clone, where
# the race detector would watch only the test process.
whole='/tests/'
go test -count=1 -timeout 25m -race "$@" $(go list ./... | grep -v "$whole")
# The packages under tests/ run their Temporal server on Postgres, in fresh
# databases beside each test's own: the end-to-end suite covers Temporal on
# Postgres at no extra run. SQLite, the default, stays covered by the smoke
# test (`make dev` as a newcomer runs it, on a file) and by the
# reconciliation run below (in memory). See docs/scale-out.md. One package
# at a time (-p 1): each runs a whole engine, tests/scaleout four processes
# of it, and two at once on a small machine slow the browser test past its
# deadlines.
TEMPORAL_PERSISTENCE=postgres go test -p 1 -count=1 -timeout 25m "$@" $(go list ./... | grep "$whole")
# The reconciliation run (docs/reconciliation.md), small: 50 randomized
# payments of every class under every fault (node outage, reorgs, worker
# SIGKILLs, RPC errors and held requests), then the engine's records
# reconciled against the chain. About three minutes; it fails on any
# discrepancy. `make chaos N=1000` is the long run.
go build -o bin/paymentsd ./cmd/paymentsd
go run ./tests/chaos/cmd/chaos -n 50 -paymentsd bin/paymentsd -classes all -faults all -seed 2
