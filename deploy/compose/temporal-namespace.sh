#!/bin/sh
# Registers the engine's namespace once the server answers (the worker
# adds its search attributes itself). Safe to run twice.
set -eu
ns="${TEMPORAL_NAMESPACE:-default}"
for i in $(seq 1 60); do
  temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1 && break
  [ "$i" = 60 ] && { echo "Temporal at $TEMPORAL_ADDRESS did not become healthy" >&2; exit 1; }
  sleep 2
done
temporal operator namespace describe -n "$ns" --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1 ||
  temporal operator namespace create -n "$ns" --retention 720h --address "$TEMPORAL_ADDRESS"
echo "namespace $ns is ready"
