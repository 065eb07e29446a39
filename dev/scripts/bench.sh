#!/usr/bin/env bash
# Benchmarks against the real PostgreSQL (see docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  ./dev/scripts/ensure-postgres.sh
  trap './dev/scripts/stop-postgres.sh .data/test-postgres' EXIT
fi
# BENCH picks others: make bench-temporal runs the ones of docs/performance.md
# "Throughput" (what a paid session costs, paid sessions against the ceiling).
go test ./tests/bench -run '^$' -bench "${BENCH:-Transaction|ScanRPC|Overview}" -benchtime "${BENCHTIME:-3s}" "$@"
