#!/usr/bin/env bash
# The test command: installs what a fresh machine lacks, then runs every
# test against a real PostgreSQL and an embedded Temporal server.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v go >/dev/null || { echo "Go 1.26 or newer is required (https://go.dev/dl/)" >&2; exit 1; }
chaos=
stop_postgres=
cleanup() {
  if [ -n "$chaos" ]; then kill "$chaos" 2>/dev/null || true; fi
  if [ -n "$stop_postgres" ]; then ./dev/scripts/stop-postgres.sh .data/test-postgres; fi
}
trap cleanup EXIT
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  ./dev/scripts/ensure-postgres.sh
  stop_postgres=1
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
#
# Three parts, scheduled so that the whole stays under ten minutes on a
# warm two-core machine (docs/performance.md, "The test command"):
#
# 1. The reconciliation run (docs/reconciliation.md), small: 50 randomized
#    payments of every class under every fault (node outage, reorgs,
#    worker SIGKILLs, RPC errors and held requests, the Temporal server
#    killed, its own PostgreSQL restarted, the worker cut off from
#    Temporal), then the engine's
#    records reconciled against the chain; it fails on any discrepancy.
#    `make chaos N=1000` is the long run. It mostly waits (on blocks, and
#    on the worker it kills), so it runs in the background beside part 2.
# 2. Every package under the race detector but the ones under tests/ (they
#    link the embedded Temporal server, whose -race build alone takes most
#    of an hour on a small machine, or run `make dev` in a clean clone,
#    where the race detector would watch only the test process); then the
#    packages under tests/ but the end-to-end suite, one at a time (-p 1:
#    tests/scaleout runs four engine processes).
# 3. The end-to-end suite, alone: its browser tests keep deadlines that a
#    busy machine would miss.
#
# The packages under tests/ run their Temporal server on Postgres, in
# fresh databases beside each test's own: the end-to-end suite covers
# Temporal on Postgres at no extra run. SQLite, the default, stays covered
# by the smoke test (`make dev` as a newcomer runs it, on a file) and by
# the reconciliation run (on a file, in a process the run kills and
# starts again). See docs/scale-out.md. tests/bench
# holds benchmarks only (`make bench`); `make lint` compiles it.
go build -o bin/paymentsd ./cmd/paymentsd
go build -o bin/chaos ./tests/chaos/cmd/chaos
mkdir -p .data
chaos_log=.data/reconciliation-run.log
./bin/chaos -n 50 -paymentsd bin/paymentsd -classes all -faults all -seed 2 >"$chaos_log" 2>&1 &
chaos=$!
whole='/tests/'
e2e='/tests/e2e$'
bench='/tests/bench$'
go test -count=1 -timeout 25m -race "$@" $(go list ./... | grep -v "$whole")
TEMPORAL_PERSISTENCE=postgres go test -p 1 -count=1 -timeout 25m "$@" $(go list ./... | grep "$whole" | grep -v "$e2e" | grep -v "$bench")
status=0
wait "$chaos" || status=$?
chaos=
echo "--- the reconciliation run (its log: $chaos_log)"
tail -n 40 "$chaos_log"
if [ "$status" != 0 ]; then
  echo "the reconciliation run failed (exit $status)" >&2
  exit "$status"
fi
TEMPORAL_PERSISTENCE=postgres go test -count=1 -timeout 25m "$@" ./tests/e2e
