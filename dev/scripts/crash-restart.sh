#!/usr/bin/env bash
# Measures how soon the dev stack serves again, and completes a payment,
# after `paymentsd dev` is killed with SIGKILL, against a clean stop and
# start. Run from the clone with no `make dev` running; it uses the
# clone's .data/ like `make dev`. Prints the figures docs/performance.md
# reports.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -n "${DATABASE_URL:-}" ] || ./dev/scripts/ensure-postgres.sh
go build -tags devstack -o bin/paymentsd-dev ./cmd/paymentsd
api="http://${HTTP_ADDR:-127.0.0.1:8080}"
log=.data/crash-restart.log
pid=

start() { ./bin/paymentsd-dev dev >>"$log" 2>&1 & pid=$!; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
ready() {
  for _ in $(seq 1 1200); do
    curl -fsS -o /dev/null "$api/readyz" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "not ready after 120 s (see $log)" >&2
  return 1
}
field() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" | head -1; }
session() {
  plan=$(field planId <.data/dev.json)
  curl -fsS -X POST "$api/api/v1/checkout/sessions" -H 'Content-Type: application/json' \
    -d "{\"paymentPlanId\":\"$plan\"}" | field token
}
status() { curl -fsS "$api/api/v1/checkout/sessions/$1" | grep -o '"status": *"[a-z_]*"' | head -1 | cut -d'"' -f4; }
completed() {
  for _ in $(seq 1 1800); do
    [ "$(status "$1" 2>/dev/null)" = completed ] && return 0
    sleep 0.1
  done
  echo "session not completed after 180 s (see $log)" >&2
  return 1
}
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true' EXIT

: >"$log"
start
ready
# A session paid right after a (re)start: the time until it completes is
# how soon the stack processes payments again (the dev chain restarts with
# the stack, so a payment in flight at the kill is gone with it; see
# docs/reconciliation.md for payments in flight across worker kills).
pay() {
  token=$(session)
  ./bin/paymentsd-dev dev pay "$token" >/dev/null
  completed "$token"
}
t=$(now); kill -TERM "$pid"; wait "$pid" || true; start; ready
echo "clean stop and start: ready after $(since "$t")"
pay
echo "  a payment sent then completed $(since "$t") after the stop"
t=$(now); kill -KILL "$pid"; wait "$pid" 2>/dev/null || true; start; ready
echo "SIGKILL and start: ready after $(since "$t")"
pay
echo "  a payment sent then completed $(since "$t") after the kill"
