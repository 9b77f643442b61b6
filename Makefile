# agentrun.nvim — build, test, demo, bench.
GO      ?= go
BIN     := bin/agentrun
VERSION := $(shell cat VERSION 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all deps build test test-go test-nvim demo bench soak fuzz clean

all: build

# deps installs what a fresh machine lacks (Neovim via apt-get, npm test peers).
deps:
	@bash scripts/deps.sh

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) .

# test runs every Go unit test, the ACP integration test against the
# TypeScript SDK agent, and the headless Neovim integration tests.
test: deps build
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 8m ./...

# demo opens Neovim with the plugin and the built-in demo agent.
demo: build
	@bash scripts/deps.sh --no-npm
	nvim --cmd "set rtp^=$(CURDIR)" -c "AgentRun"

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./termhost/
	$(GO) run ./bench

soak: build
	AGENTRUN_SOAK=1 $(GO) test -count=1 -timeout 10m -run Soak -v ./...

# fuzz runs every fuzz target for FUZZTIME each (the seeds also run in make test).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzStore -fuzztime $(FUZZTIME) ./termhost/
	$(GO) test -run '^$$' -fuzz FuzzScanner -fuzztime $(FUZZTIME) ./termhost/
	$(GO) test -run '^$$' -fuzz FuzzOSCFilter -fuzztime $(FUZZTIME) ./termhost/
	$(GO) test -run '^$$' -fuzz FuzzClientRequest -fuzztime $(FUZZTIME) ./acp/
	$(GO) test -run '^$$' -fuzz FuzzUpdateFilter -fuzztime $(FUZZTIME) ./acp/

clean:
	rm -rf bin
