# voxgate — the two commands that matter: `make run` and `make test`.
GO        ?= go
FUZZTIME  ?= 10s
BENCHTIME ?= 1s

.PHONY: build run test bench bench-smoke fuzz soak lint clean

build:
	$(GO) build -trimpath -o bin/voxgate ./cmd/voxgate

# Zero setup: finds or starts PostgreSQL under ./.voxgate/, prints a dev token.
run:
	$(GO) run ./cmd/voxgate dev

# vet, then every test with the race detector against a real PostgreSQL
# (found on localhost:5432 or provisioned from the local binaries), then one
# short run of every benchmark the README and docs cite. The Node openai
# client the completions test drives is installed first (scripts/node-openai.sh),
# the TypeScript client is built and unit-tested (scripts/client-ts.sh; its
# live tests run in cmd/voxgate), and Debian's chromium for the browser tests (scripts/chromium.sh).
# The Helm chart, the alert rules and the compose file are checked by helm,
# kubeconform and promtool at pinned versions (scripts/deploy-check.sh; the
# tools are built once into a cache, about 15 minutes on a cold machine).
test:
	$(GO) vet ./...
	bash scripts/deploy-check.sh
	bash scripts/node-openai.sh
	bash scripts/client-ts.sh
	bash scripts/chromium.sh
	$(GO) test -race -count=1 -timeout 20m ./...
	bash scripts/bench-smoke.sh

# Every benchmark command the README and docs cite, once at -benchtime 1x.
bench-smoke:
	bash scripts/bench-smoke.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

# A short run of every fuzz target (FUZZTIME each).
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

# Not in CI: a mixed chat/voice/tool load against one gateway for SOAK, with
# the database cut in the middle; reports goroutines, heap, descriptors and
# pool connections at start and end, and records against turns. SOAK=30m is
# the real bar.
SOAK ?= 2m
soak:
	VOXGATE_SOAK=$(SOAK) $(GO) test -count=1 -run '^TestSoak$$' -v -timeout 2h ./cmd/voxgate/

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin
