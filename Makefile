# sluice — see README.md.
GO      ?= go
BIN     ?= bin/sluice
# stdjson,gjson: hertz without bytedance/sonic (smaller binary, ~5 MB less RSS per worker).
TAGS    ?= stdjson,gjson

.PHONY: build run test fuzz vet clean

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
	$(GO) test ./worker -run '^$$' -fuzz '^FuzzReplaceModel$$' -fuzztime $(FUZZTIME)

clean:
	rm -rf bin
