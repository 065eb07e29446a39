#!/usr/bin/env bash
# Regenerates the dev chain's contract artifacts: compiles dev/contracts/*.sol
# with solcjs from npm into dev/contracts/build/NAME.{abi,bin}, then writes the
# Go bindings in dev/contracts/bindings with abigen v2. The outputs are committed,
# so only run this after changing a contract; building and testing need
# neither node nor abigen.
set -euo pipefail
cd "$(dirname "$0")/../.."

SOLC_VERSION="${SOLC_VERSION:-0.8.28}"
ABIGEN_VERSION="v1.17.10" # keep in step with go-ethereum in go.mod
CONTRACTS=(DevUSDC DevToken DevPriceFeed DevMultisend DevForwarder)

command -v npx >/dev/null || { echo "npx (Node.js) is required to run solcjs" >&2; exit 1; }

# Use an abigen of the pinned version from PATH or GOPATH/bin, else install it.
ABIGEN=""
for candidate in "$(command -v abigen || true)" "$(go env GOPATH)/bin/abigen"; do
	if [ -x "$candidate" ] && "$candidate" --version 2>/dev/null | grep -q "${ABIGEN_VERSION#v}"; then
		ABIGEN="$candidate"
		break
	fi
done
if [ -z "$ABIGEN" ]; then
	go install "github.com/ethereum/go-ethereum/cmd/abigen@${ABIGEN_VERSION}"
	ABIGEN="$(go env GOPATH)/bin/abigen"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

mkdir -p dev/contracts/build dev/contracts/bindings
for name in "${CONTRACTS[@]}"; do
	out="$tmp/$name"
	mkdir -p "$out"
	# solcjs names its outputs after the mangled source path
	# (e.g. DevUSDC_sol_DevUSDC.abi); run from dev/contracts/ and rename.
	(cd dev/contracts && npx --yes "solc@${SOLC_VERSION}" --bin --abi --optimize -o "$out" "$name.sol")
	cp "$out/${name}_sol_${name}.abi" "dev/contracts/build/$name.abi"
	cp "$out/${name}_sol_${name}.bin" "dev/contracts/build/$name.bin"
	pkgfile="$(echo "$name" | tr '[:upper:]' '[:lower:]').go"
	"$ABIGEN" --v2 --abi "dev/contracts/build/$name.abi" --bin "dev/contracts/build/$name.bin" \
		--pkg bindings --type "$name" --out "dev/contracts/bindings/$pkgfile"
done
chmod 644 dev/contracts/bindings/*.go # abigen writes 0600
echo "contracts: regenerated with solc ${SOLC_VERSION} and abigen ${ABIGEN_VERSION}"
