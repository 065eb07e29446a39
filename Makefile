# The two commands a newcomer needs: `make dev` runs everything, `make test`
# runs the tests. Both install what a fresh machine lacks.
.PHONY: dev test build lint generate contracts bench bench-build bench-scale bench-temporal fuzz record-histories dupes

dev:
	./dev/scripts/dev.sh

test:
	./dev/scripts/test.sh

# VERSION names a release's build (make build VERSION=v0.2.0); without it
# the binary is the version internal/version names. REVISION is the
# clone's commit, set here since Go records none from a git worktree or
# under GOFLAGS=-buildvcs=false.
VERSION ?=
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS = $(if $(VERSION),-X github.com/paymentsd/paymentsd/internal/version.Version=$(VERSION)) \
	$(if $(REVISION),-X github.com/paymentsd/paymentsd/internal/version.revision=$(REVISION))

build:
	go build -ldflags "$(LDFLAGS)" -o bin/paymentsd ./cmd/paymentsd

# The linters are pinned here and built by `go run` on first use.
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2
WORKFLOWCHECK = go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0

# lint checks formatting, runs go vet and staticcheck (also on the dev
# build), workflowcheck on the workflows, which must be deterministic, and
# Redocly's linter on the OpenAPI document.
lint:
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed on:"; gofmt -l .; exit 1; }
	go vet ./...
	go vet -tags devstack ./cmd/paymentsd
	go run $(STATICCHECK) ./...
	go run $(STATICCHECK) -tags devstack ./cmd/paymentsd
	go run $(WORKFLOWCHECK) -show-pos ./workflows/...
	./dev/scripts/lint-openapi.sh

# dupes counts the clone groups of 50 tokens or more in the handwritten Go
# (the generated code left out): docs/decisions.md, "The house by areas".
DUPL = github.com/mibk/dupl@v1.0.0
dupes:
	@git ls-files '*.go' | grep -vE '^(api/gen|dev/contracts/bindings)/' | go run $(DUPL) -files -t 50 | tail -n 1

# generate regenerates the Connect and protobuf code from api/proto/ with protoc
# and the Go plugins pinned in go.mod, and the TypeScript client's with the
# protoc-gen-es pinned in client/typescript (when npm is there; its
# node_modules is installed again when package-lock.json is newer).
generate:
	go install google.golang.org/protobuf/cmd/protoc-gen-go connectrpc.com/connect/cmd/protoc-gen-connect-go
	PATH="$$(go env GOPATH)/bin:$$PATH" protoc -I api/proto \
		--go_out=. --go_opt=module=github.com/paymentsd/paymentsd \
		--connect-go_out=. --connect-go_opt=module=github.com/paymentsd/paymentsd \
		api/proto/paymentsd/v1/payments.proto
	@if command -v npm >/dev/null; then \
		cd client/typescript && { [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --ignore-scripts --no-audit --no-fund >/dev/null; } && npm run --silent generate; \
	else echo "npm not found: client/typescript/src/gen is not regenerated"; fi

# contracts recompiles the dev chain's Solidity contracts and regenerates
# their Go bindings.
contracts:
	./dev/scripts/contracts.sh

bench:
	./dev/scripts/bench.sh

# bench-temporal counts a paid session's Temporal actions and measures paid
# sessions against Temporal's ceiling (TEMPORAL_PERSISTENCE=postgres for the
# server on Postgres; docs/performance.md "Throughput").
bench-temporal:
	BENCH='PaidSessionCost|Throughput|WorkflowCeiling' BENCHTIME=1x BENCH_SESSIONS=$(or $(N),300) ./dev/scripts/bench.sh

# bench-scale runs the benchmarks at scale (docs/performance.md, "Data at
# scale") over a project of SCALE checkout sessions and as many
# transactions, a million unless set, seeded first (about 5 minutes).
bench-scale:
	BENCH_SCALE=$(or $(SCALE),1000000) ./dev/scripts/bench.sh

# bench-build times the dev build and the production binary on an empty
# build cache each (docs/performance.md, "Cold builds").
bench-build:
	./dev/scripts/cold-build.sh

# record-histories keeps a release's workflow histories for every later
# release to replay: make record-histories RELEASE=v0.1.0
record-histories:
	./dev/scripts/record-histories.sh $(RELEASE)

fuzz:
	go test ./api -run '^$$' -fuzz FuzzDecodePlanInput -fuzztime 30s
	go test ./api -run '^$$' -fuzz FuzzDecodeSessionInput -fuzztime 30s
	go test ./api -run '^$$' -fuzz FuzzDecodeResolution -fuzztime 30s
	go test ./payment -run '^$$' -fuzz FuzzParseDashboardFilters -fuzztime 30s
	go test ./api -run '^$$' -fuzz FuzzDecodeAssignment -fuzztime 30s
	go test ./payment -run '^$$' -fuzz FuzzParseListQuery -fuzztime 30s
	go test ./payment -run '^$$' -fuzz FuzzParseISOTime -fuzztime 30s

# chaos is the randomized reconciliation run (docs/reconciliation.md), kept
# out of make test: N payments with faults injected, then the engine's
# records reconciled against the chain; it fails on any discrepancy. Pick
# classes and faults with CHAOS_FLAGS, e.g. CHAOS_FLAGS='-classes happy -faults happy'.
.PHONY: chaos
chaos:
	go build -ldflags "$(LDFLAGS)" -o bin/paymentsd ./cmd/paymentsd
	go run ./tests/chaos/cmd/chaos -n $(or $(N),50) -paymentsd bin/paymentsd $(CHAOS_FLAGS)

# soak holds the production shape (two APIs, two workers, Temporal on
# Postgres) under a steady mix for DURATION (default 30m) and fails if
# memory, goroutines, connections or backlogs grow from the 5th minute on,
# or a session is lost (docs/performance.md, "Soak"). Kept out of make test.
.PHONY: soak
soak:
	go build -ldflags "$(LDFLAGS)" -o bin/paymentsd ./cmd/paymentsd
	TEMPORAL_PERSISTENCE=postgres go run ./tests/soak/cmd/soak -duration $(or $(DURATION),30m) -paymentsd bin/paymentsd $(SOAK_FLAGS)
