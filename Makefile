# sluice — see README.md.
GO      ?= go
BIN     ?= bin/sluice
# stdjson,gjson: hertz without bytedance/sonic (smaller binary, ~5 MB less RSS per worker).
TAGS    ?= stdjson,gjson

.PHONY: build run test fuzz vet bench clean

build:
	$(GO) build -tags $(TAGS) -o $(BIN) ./cmd/sluice

# The demo: the gateway on a built-in config, in front of a built-in mock upstream.
run: build
	./$(BIN) demo

vet:
	$(GO) vet -tags $(TAGS) ./...
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

# Unit and integration tests, all under the race detector; the integration
# tests build the gateway binary with -race too (SLUICE_TEST_RACE=1).
test: vet
	SLUICE_TEST_RACE=1 SLUICE_TEST_TAGS=$(TAGS) $(GO) test -tags $(TAGS) -race -count=1 -timeout 15m ./...

# A short run of every fuzz target (go test -fuzz takes one target at a time).
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./worker -run '^$$' -fuzz '^FuzzAppendJSONString$$' -fuzztime $(FUZZTIME)
	$(GO) test ./worker -run '^$$' -fuzz '^FuzzRewriteModel$$' -fuzztime $(FUZZTIME)
	$(GO) test ./worker/reqscan -run '^$$' -fuzz '^FuzzScan$$' -fuzztime $(FUZZTIME)
	$(GO) test ./worker/sse -run '^$$' -fuzz '^FuzzSplitter$$' -fuzztime $(FUZZTIME)
	$(GO) test ./worker/sse -run '^$$' -fuzz '^FuzzBodyUsage$$' -fuzztime $(FUZZTIME)

# The benchmark rig (bench/): sluice against plain nginx and nginx+Lua, each
# pinned to CPU 0, driver and fake backend on CPU 1. Installs nginx and its
# Lua module from Debian (bench/install-peers.sh). Writes docs/benchmarks.md.
# One scenario: make bench SCENARIOS=a   (a b c d e f g; see bench/rig)
SCENARIOS ?= a,b,c,d,e,f,g
RUNS      ?= 3
bench:
	$(GO) run ./bench/rig -scenarios $(SCENARIOS) -runs $(RUNS)

clean:
	rm -rf bin
