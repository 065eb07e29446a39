#!/usr/bin/env bash
# Benchmarks against the real PostgreSQL (see docs/performance.md).
# With BENCH_SCALE set (make bench-scale), the benchmarks at scale instead:
# BENCH_SCALE checkout sessions and as many transactions seeded first
# (docs/performance.md, "Data at scale").
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  ./dev/scripts/ensure-postgres.sh
  trap './dev/scripts/stop-postgres.sh .data/test-postgres' EXIT
fi
# BENCH picks others: make bench-temporal runs the ones of docs/performance.md
# "Throughput" (what a paid session costs, paid sessions against the ceiling).
if [ -n "${BENCH_SCALE:-}" ]; then
  go test ./tests/bench -run '^$' -bench "${BENCH:-^BenchmarkScale}" -benchtime "${BENCHTIME:-3s}" -timeout 3h "$@"
else
  go test ./tests/bench -run '^$' -bench "${BENCH:-Transaction|ScanRPC|Overview}" -skip '^BenchmarkScale' -benchtime "${BENCHTIME:-3s}" "$@"
fi
