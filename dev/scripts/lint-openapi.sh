#!/usr/bin/env bash
# Lints the OpenAPI document with Redocly's recommended rules (errors fail;
# warnings are printed). Needs npx (Node.js); skipped with a note without it.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v npx >/dev/null; then
  echo "npx not found: api/openapi.json is not linted (install Node.js)" >&2
  exit 0
fi
npx --yes @redocly/cli@2.77.0 lint --format=summary api/openapi.json
