# The everyday commands. `make verify` and `make test` are the two a
# newcomer runs; both work on a fresh machine with Go and redis-server.
GO ?= go

.PHONY: generate verify test test-faults bench check

# Regenerate the catalogue (the typed limits, memory/, lua/) from spec/,
# and examples/quota from its spec.
generate:
	$(GO) generate ./...

# Replay every vector on every embedded target (generated Go, the Lua in
# gopher-lua and in miniredis), and on a real Redis when REDIS_URL is set.
verify:
	$(GO) run ./cmd/verify -vectors vectors

# Every test, real Redis included (each test starts its own redis-server).
test:
	$(GO) test -count=1 -timeout 20m ./...
	$(GO) test -count=1 -race ./kit/ ./memory/ ./fallback/ ./lease/ ./denials/ ./internal/keyed/ ./httplimit/

# The fault suite (docs/semantics.md, "Faults"): lost replies, a slow,
# killed, frozen or flapping Redis, a slot migrating, long and many keys,
# each counting admissions exactly. `make test` runs it too.
test-faults:
	$(GO) test -count=1 -run 'Fault' ./...

# Speed and memory of every benchmark.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# What a reviewer runs first: formatting, vet, generated files up to date.
check:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	$(GO) run ./cmd/gen -check
	cd examples/quota && $(GO) run ../../cmd/gen -spec quota.yaml -out . -package quota -check
