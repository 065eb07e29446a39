#!/usr/bin/env bash
# Times the dev build (the embedded Temporal server) and the production
# binary with an empty build cache each, the modules already downloaded:
# the figures of docs/performance.md, "Cold builds".
set -euo pipefail
cd "$(dirname "$0")/../.."
go mod download
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
for build in "-tags devstack" ""; do
  rm -rf "$cache" && mkdir -p "$cache"
  start=$(date +%s)
  # shellcheck disable=SC2086 # the tags are two words
  GOCACHE=$cache go build $build -o /dev/null ./cmd/paymentsd
  echo "go build ${build:+$build }./cmd/paymentsd, cold: $(($(date +%s) - start)) s ($(go list $build -deps ./cmd/paymentsd | wc -l) packages)"
done
