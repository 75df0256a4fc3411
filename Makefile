# The everyday commands. `make verify` and `make test` are the two a
# newcomer runs; both work on a fresh machine with Go and redis-server.
GO ?= go

.PHONY: generate verify test test-all redis-server test-faults bench bench-readme bench-go peers check

# Regenerate the catalogue (the typed limits, goimpl/, lua/) from spec/,
# and examples/quota from its spec.
generate:
	$(GO) generate ./...

# Replay every vector on every embedded target (generated Go, the Lua in
# gopher-lua and in miniredis), and on a real Redis when REDIS_URL is set.
verify:
	$(GO) run ./cmd/verify -vectors vectors

# The tests, in about three minutes: every vector on every target (a real
# Redis and a Redis Cluster included; each test starts its own servers),
# the fault suite, and the rest, with -short: the slowest fills, the
# tests that build modules with the go tool, the Cluster by FCALL and
# through redislimit, most random traces and the race run are left to
# test-all (grep testing.Short); then the tests of the other modules
# (MODULES). Installs redis-server and valgrind first when they are
# missing.
test: redis-server
	$(GO) test -short -count=1 ./...
	@for m in $(MODULES); do echo "cd $$m && $(GO) test -short -count=1 ./..."; (cd $$m && $(GO) test -short -count=1 ./...) || exit 1; done

# The modules of their own beside the main one, each replacing limitspec
# with this tree, so that limitspec's go.mod requires none of what they
# need: OpenTelemetry (otelmetrics), the example service that serves its
# metrics to Prometheus (cmd/example), the plotting library (cmd/pictures),
# the JSON Schema validator (docs/vectorschema), the linearizability
# check of concurrent histories (linearize, porcupine) and Envoy's rate
# limit service (rls, gRPC and go-control-plane). make test,
# test-all and check cover them; bench/ and peers/, which fetch the
# peers' modules, are vetted by check.
MODULES = otelmetrics cmd/example cmd/pictures docs/vectorschema linearize rls

# What CI runs (.ci/run): make check, then every test at full size (of
# the main module and of MODULES), then the race detector on the
# packages that share state between goroutines.
test-all: redis-server check
	$(GO) test -count=1 -timeout 20m ./...
	@for m in $(MODULES); do echo "cd $$m && $(GO) test -count=1 ./..."; (cd $$m && $(GO) test -count=1 ./...) || exit 1; done
	$(GO) test -count=1 -race $(RACE_PKGS)

RACE_PKGS = ./kit/ ./goimpl/ ./fallback/ ./lease/ ./denials/ ./internal/keyed/ ./httplimit/

# redis-server, redis-cli and valgrind (whose callgrind counts the
# instructions of the scripts, TestInstructionBudgets) from the
# distribution's packages, with sudo when not root, unless they are on
# the PATH.
redis-server:
	@./scripts/install-redis

# The fault suite (docs/semantics.md, "Faults"): lost replies, a slow,
# killed, frozen or flapping Redis, a slot migrating, long and many keys,
# each counting admissions exactly. `make test` runs it too.
test-faults:
	$(GO) test -count=1 -run 'Fault' ./...

# limitspec beside its peers (x/time/rate, go-limiter, throttled, ulule,
# redis_rate and the common hand-written scripts), side by side: Redis
# CPU per decision, decisions/s through one Redis, in-process ns/op and
# allocations, heap and Redis memory per key. bench/ is a module of its
# own, so the peers stay out of go.mod; it starts and stops a throwaway
# redis-server. Flags: `cd bench && go run . -h` (-only picks figures).
bench:
	cd bench && $(GO) run .

# Every figure, the instruction counts under valgrind's callgrind
# included (about half an hour), written into docs/performance.md as
# well, and the Goals in short into README.md's "Performance".
bench-readme:
	cd bench && $(GO) run . -only redis-cpu,throughput,denied,redis-memory,inprocess,heap,holds,redis-instructions,redis-instruction-parts -doc ../docs/performance.md -readme ../README.md

# Speed and memory of every go test benchmark of the main module.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Where x/time/rate and throttled's GCRA agree with the gcra vectors and
# where they diverge: runs verify -exec on each peer's adapter (peers/,
# a module of its own) and writes the table into docs/peers.md.
peers:
	cd peers && $(GO) run ./cmd/table -doc ../docs/peers.md

# The README's pictures (docs/pictures/<algorithm>.svg): how each
# algorithm decides one shared trace of requests, drawn again (cmd/pictures
# is a module of its own).
.PHONY: pictures
pictures:
	cd cmd/pictures && $(GO) run .

# What a reviewer runs first: formatting, vet (of every module), generated
# files and the pictures up to date.
check:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	cd peers && $(GO) vet ./...
	@for m in $(MODULES); do echo "cd $$m && $(GO) vet ./..."; (cd $$m && $(GO) vet ./...) || exit 1; done
	$(GO) run ./cmd/gen -check
	cd examples/quota && $(GO) run ../../cmd/gen -spec quota.yaml -out . -package quota -check
	cd cmd/pictures && $(GO) run . -check
	@echo "make check: passed (gofmt, go vet, generated files and pictures up to date)"
