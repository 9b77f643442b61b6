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
	@! command -v nvim >/dev/null || nvim --headless --clean -c 'helptags doc' -c q

# The Neovim versions the integration tests run against; make test
# NVIM_VERSIONS=0.12 runs one. 0.7 is the system's (Debian 12's 0.7.2),
# the others come from scripts/nvim-versions.sh.
NVIM_VERSIONS ?= 0.7 0.10 0.12

# test runs every Go unit test, the ACP integration test against the
# TypeScript SDK agent, then the headless Neovim integration tests and the
# display fuzzer's bounded run on each Neovim version.
test: deps build
	$(GO) vet ./...
	AGENTRUN_VTERM_SRC=$$(bash scripts/vterm-src.sh) $(GO) test -race -count=1 -timeout 8m $$($(GO) list ./... | grep -v '/tests$$')
	@for v in $(NVIM_VERSIONS); do \
	  bin=$$(bash scripts/nvim-versions.sh $$v) || exit 1; \
	  echo "== integration tests on $$($$bin --version | head -n1) ($$bin)"; \
	  AGENTRUN_NVIM=$$bin $(GO) test -race -count=1 -timeout 8m ./tests/ || exit 1; \
	done

# demo opens Neovim with the plugin and the built-in demo agent.
demo: build
	@bash scripts/deps.sh --no-npm
	nvim --cmd "set rtp^=$(CURDIR)" -c "AgentRun"

# bench runs on the system's Neovim; make bench NVIM=0.12 picks another.
NVIM ?= 0.7
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./internal/render/ ./internal/vtsafe/ ./termhost/
	AGENTRUN_NVIM=$$(bash scripts/nvim-versions.sh $(NVIM)) $(GO) run ./bench

soak: build
	AGENTRUN_SOAK=1 $(GO) test -count=1 -timeout 10m -run Soak -v ./...

# fuzz runs every fuzz target for FUZZTIME each (the seeds also run in make test).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzStore -fuzztime $(FUZZTIME) ./internal/render/
	$(GO) test -run '^$$' -fuzz FuzzScanner -fuzztime $(FUZZTIME) ./internal/render/
	$(GO) test -run '^$$' -fuzz FuzzOSCFilter -fuzztime $(FUZZTIME) ./termhost/shellinteg/
	$(GO) test -run '^$$' -fuzz FuzzClientRequest -fuzztime $(FUZZTIME) ./acp/
	$(GO) test -run '^$$' -fuzz FuzzUpdateFilter -fuzztime $(FUZZTIME) ./acp/
	$(GO) test -run '^$$' -fuzz FuzzFilter -fuzztime $(FUZZTIME) ./internal/vtsafe/
	AGENTRUN_VTERM_SRC=$$(bash scripts/vterm-src.sh) AGENTRUN_VTERM_FUZZ_TIME=$(FUZZTIME) $(GO) test -count=1 -v -run '^TestLibvtermFuzz$$' ./internal/vtsafe/ | grep -v '^=== RUN'
	AGENTRUN_VTERM_SRC=$$(bash scripts/vterm-src.sh) $(GO) test -run '^$$' -fuzz FuzzLibvterm -fuzztime $(FUZZTIME) ./internal/vtsafe/
	@for v in $(NVIM_VERSIONS); do \
	  bin=$$(bash scripts/nvim-versions.sh $$v) || exit 1; \
	  echo "== display fuzz on $$($$bin --version | head -n1)"; \
	  AGENTRUN_NVIM=$$bin AGENTRUN_DISPLAY_FUZZ_TIME=$(FUZZTIME) $(GO) test -count=1 -timeout 30m -v -run '^TestDisplayFuzz$$' ./tests/ | grep -v '^=== RUN' || exit 1; \
	  AGENTRUN_NVIM=$$bin $(GO) test -run '^$$' -fuzz FuzzDisplay -fuzztime $(FUZZTIME) ./tests/ || exit 1; \
	done

clean:
	rm -rf bin
