# agentrun.nvim — build, test, demo, bench.
GO      ?= go
BIN     := bin/agentrun
VERSION := $(shell cat VERSION 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# The platforms a release ships a binary for (and make cross checks).
PLATFORMS := linux/amd64 linux/arm64 darwin/arm64 darwin/amd64

.PHONY: all deps build cross check test test-go test-lua test-nvim test-remote test-agents demo bench soak fuzz flake release clean

all: build

# deps installs what a fresh machine lacks (Neovim via apt-get, npm test peers).
deps:
	@bash scripts/deps.sh

build:
	$(GO) build -ldflags "$(LDFLAGS) -X main.origin=make" -o $(BIN) .
	@! command -v nvim >/dev/null || nvim --headless --clean -c 'helptags doc' -c q

# The Neovim versions make test runs the integration tests against: the
# newest (make test-nvim NVIM_VERSIONS="0.10 0.7" runs them on the others;
# CI runs all three: on 2 cores the three take half an hour). 0.7 is the
# system's (Debian 12's 0.7.2), the others come from
# scripts/nvim-versions.sh. The Lua unit tests (seconds) run on
# LUA_VERSIONS, the newest and the oldest; make test-remote's local side
# of a link on REMOTE_VERSIONS, the same two.
NVIM_VERSIONS ?= 0.12
LUA_VERSIONS ?= 0.12 0.7
REMOTE_VERSIONS ?= 0.12 0.7

# cross vets the code once per OS of PLATFORMS, as a release builds it
# (CGO_ENABLED=0), so that a call that exists on one platform only cannot
# land: go vet compiles and type-checks every package for that OS. No
# file of ours depends on the CPU (TestNoArchSpecificFiles), so one CPU
# per OS is enough; make release builds every platform. CI runs it; make
# test vets for this machine only (the other OS's standard library,
# compiled from empty caches, takes minutes on 2 cores).
cross:
	@vetted=; for p in $(PLATFORMS); do \
	  os=$${p%/*}; \
	  case " $$vetted " in *" $$os "*) continue;; esac; vetted="$$vetted $$os"; \
	  echo "== go vet for $$os (as $$p)"; \
	  GOOS=$$os GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) vet ./... || exit 1; \
	done

# test-go runs every Go unit test (and the ACP integration test against
# the TypeScript SDK agent), without Neovim. VTERM_SRC (make test sets it:
# scripts/vterm-src.sh, Debian's sources) adds the display filter's
# differential fuzzing against libvterm.
VTERM_SRC ?=
# AGENTRUN_DEPS=1 says make deps ran: a unit test that needs what it
# installs (bubblewrap, zsh, the npm peers) fails when it is missing,
# where a fresh clone's go test ./... skips it (internal/testdeps).
test-go:
	AGENTRUN_DEPS=1 AGENTRUN_VTERM_SRC=$(VTERM_SRC) $(GO) test -race -count=1 -timeout 8m $$($(GO) list ./... | grep -v '/tests$$')

# test-lua runs the Lua unit tests (tests/unit: pure Lua, no backend, no
# agent) in headless Neovim, on each of NVIM_VERSIONS.
test-lua:
	@bash scripts/lua-unit.sh $(NVIM_VERSIONS)

# check is the inner loop, under two minutes on 2 cores: luacheck, go vet,
# the Go unit tests (no -race, the long property runs cut short) and the
# Lua unit tests on the system's Neovim. make test runs all of it and
# more; nothing here needs an agent, tmux or sshd.
check:
	@bash scripts/deps.sh --no-npm
	@echo "== luacheck (.luacheckrc)" && luacheck lua plugin build.lua tests/unit -q --formatter plain
	@echo "== go vet" && $(GO) vet ./...
	@echo "== go test -short (the unit tests)" && AGENTRUN_DEPS=1 $(GO) test -short -count=1 $$($(GO) list ./... | grep -v '/tests$$')
	@echo "== Lua unit tests" && bash scripts/lua-unit.sh 0.7

# test vets the code (for this machine: make cross vets it for every OS),
# checks the Lua (luacheck, the Lua unit tests), then runs every Go unit
# test beside the headless
# Neovim integration tests and the display fuzzer's bounded run on
# NVIM_VERSIONS (scripts/test.sh; scripts/integration.sh: each version's
# tests in parts, three at a time), within 10 minutes on 2 cores. The
# tests over SSH and the real agents': make test-remote, make test-agents.
test: deps build
	@echo "== go vet" && $(GO) vet ./...
	@LUA_VERSIONS="$(LUA_VERSIONS)" GO=$(GO) MAKE=$(MAKE) bash scripts/test.sh $(NVIM_VERSIONS)

# test-nvim runs the Lua unit tests and the integration tests (those of
# make test) on NVIM_VERSIONS, without the rest of make test: CI runs
# make test-nvim NVIM_VERSIONS="0.10 0.7".
test-nvim: deps build
	@bash scripts/lua-unit.sh $(NVIM_VERSIONS)
	@GO=$(GO) bash scripts/integration.sh $(NVIM_VERSIONS)

# test-remote runs the tests over SSH (TestRemote*, TestSSH*: a private
# sshd on 127.0.0.1, two local test users, the remote user's Neovim) and
# test-agents the real agent packages' (TestReal*: Claude Code, Codex,
# Gemini CLI, opencode, Qwen Code, Copilot, each offline against a fake
# model API; on the first of NVIM_VERSIONS), the tests over SSH on each
# of REMOTE_VERSIONS (the local side of the link): they weigh the most, so
# make test leaves them out to stay within its 10 minutes; CI runs them.
# (each version's in one part, one test after another: their timings,
# a link's heartbeats, an agent's start, are what they test)
test-remote: deps build
	@AGENTRUN_TEST_SET=remote AGENTRUN_TEST_SHARDS=1 AGENTRUN_TEST_JOBS=2 GO=$(GO) bash scripts/integration.sh $(REMOTE_VERSIONS)
test-agents: deps build
	@AGENTRUN_TEST_SET=agents AGENTRUN_TEST_SHARDS=1 GO=$(GO) bash scripts/integration.sh $(NVIM_VERSIONS)

# demo opens Neovim with the plugin and the built-in demo agent.
demo: build
	@bash scripts/deps.sh --no-npm
	nvim --cmd "set rtp^=$(CURDIR)" -c "AgentRun"

# bench runs on the system's Neovim; make bench NVIM=0.12 picks another,
# make bench NVIM="0.7 0.10 0.12" runs the Neovim-dependent parts (display,
# latency a person feels) on each in turn and the rest once, on the first.
NVIM ?= 0.7
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./internal/render/ ./internal/vtsafe/ ./termhost/
	set -e; for v in $(NVIM); do \
		AGENTRUN_NVIM=$$(bash scripts/nvim-versions.sh $$v) $(GO) run ./bench -only nvim; echo; \
	done
	AGENTRUN_NVIM=$$(bash scripts/nvim-versions.sh $(firstword $(NVIM))) $(GO) run ./bench -only shared

soak: build
	AGENTRUN_SOAK=1 $(GO) test -count=1 -timeout 10m -run Soak -v ./...

# flake runs the integration tests RUN matches N times on Neovim NVIM
# while LOAD busy loops keep the cores busy, as a loaded CI machine does:
# make flake RUN=TestHeldTerminalLetsGo N=30. A test that fails here is
# a race to fix at its cause.
RUN  ?= .
N    ?= 20
LOAD ?= 2
flake: build
	@bin=$$(bash scripts/nvim-versions.sh $(NVIM)) || exit 1; \
	pids=; for i in $$(seq 1 $(LOAD)); do (while :; do :; done) & pids="$$pids $$!"; done; \
	trap 'kill $$pids 2>/dev/null' EXIT; \
	AGENTRUN_NVIM=$$bin $(GO) test -count=$(N) -failfast -timeout 60m -run '$(RUN)' ./tests/

# fuzz runs every fuzz target for FUZZTIME each (the seeds also run in make test).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzStore -fuzztime $(FUZZTIME) ./internal/render/
	$(GO) test -run '^$$' -fuzz FuzzScanner -fuzztime $(FUZZTIME) ./internal/render/
	$(GO) test -run '^$$' -fuzz FuzzOSCFilter -fuzztime $(FUZZTIME) ./termhost/shellinteg/
	$(GO) test -run '^$$' -fuzz FuzzClientRequest -fuzztime $(FUZZTIME) ./acp/
	$(GO) test -run '^$$' -fuzz FuzzUpdateFilter -fuzztime $(FUZZTIME) ./acp/
	$(GO) test -run '^$$' -fuzz FuzzFilter -fuzztime $(FUZZTIME) ./internal/vtsafe/
	AGENTRUN_SHELLDIFF_N=3000 $(GO) test -count=1 -timeout 30m -run '^TestShellDiff$$' ./internal/cmdrule/
	AGENTRUN_RULES_LINES=3000 $(GO) test -count=1 -timeout 30m -run '^TestRulesHoldAgainstWhatBashRuns$$' ./internal/cmdrule/
	AGENTRUN_VTERM_SRC=$$(bash scripts/vterm-src.sh) AGENTRUN_VTERM_FUZZ_TIME=$(FUZZTIME) $(GO) test -count=1 -v -run '^TestLibvtermFuzz$$' ./internal/vtsafe/ | grep -v '^=== RUN'
	AGENTRUN_VTERM_SRC=$$(bash scripts/vterm-src.sh) $(GO) test -run '^$$' -fuzz FuzzLibvterm -fuzztime $(FUZZTIME) ./internal/vtsafe/
	@for v in $(NVIM_VERSIONS); do \
	  bin=$$(bash scripts/nvim-versions.sh $$v) || exit 1; \
	  echo "== display fuzz on $$($$bin --version | head -n1)"; \
	  AGENTRUN_NVIM=$$bin AGENTRUN_DISPLAY_FUZZ_TIME=$(FUZZTIME) $(GO) test -count=1 -timeout 30m -v -run '^TestDisplayFuzz$$' ./tests/ | grep -v '^=== RUN' || exit 1; \
	  AGENTRUN_NVIM=$$bin $(GO) test -run '^$$' -fuzz FuzzDisplay -fuzztime $(FUZZTIME) ./tests/ || exit 1; \
	done

# release builds the binaries a GitHub release of VERSION carries, one
# per platform (agentrun-OS-ARCH, static, no cgo) and checksums.txt (their
# sha256, as sha256sum writes it), into RELEASE_DIR. The plugin's
# installer (lua/agentrun/install.lua) downloads the one for its platform
# from the release tagged vVERSION and checks it against checksums.txt.
RELEASE_DIR ?= release
release:
	@rm -rf $(RELEASE_DIR) && mkdir -p $(RELEASE_DIR)
	@for p in $(PLATFORMS); do \
	  echo "== agentrun $(VERSION) for $$p"; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) build -trimpath \
	    -ldflags "$(LDFLAGS) -X main.origin=release -s -w" \
	    -o $(RELEASE_DIR)/agentrun-$${p%/*}-$${p#*/} . || exit 1; \
	done
	@cd $(RELEASE_DIR) && if command -v sha256sum >/dev/null; then sha256sum agentrun-*; \
	  else shasum -a 256 agentrun-*; fi > checksums.txt
	@cat $(RELEASE_DIR)/checksums.txt

clean:
	rm -rf bin release
