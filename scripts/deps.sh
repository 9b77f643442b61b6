#!/usr/bin/env bash
# deps.sh installs what a fresh machine lacks for `make demo` and `make test`:
# Neovim (Debian's, via apt-get), tmux, Neovim 0.10 and 0.12 for the tests (in a
# private prefix: scripts/nvim-versions.sh) and the npm packages of the
# test peers.
# It says what it installs and does nothing when everything is present.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# Debian packages: Neovim (0.7.2, the system's), tmux (the screen tests
# run Neovim in it), patchelf (scripts/nvim-versions.sh), zsh (the shell
# integration tests run bash and zsh), bubblewrap (terminal.sandbox and its
# tests), a C compiler and utf8proc (the display filter's fuzzer builds
# libvterm and Neovim 0.12's vterm into a harness), OpenSSH's server and
# client (the remote-over-SSH tests run a private sshd on 127.0.0.1),
# luacheck (make test checks the Lua for undefined and unused names).
missing=""
for pair in nvim:neovim tmux:tmux patchelf:patchelf zsh:zsh bwrap:bubblewrap cc:gcc dpkg-source:dpkg-dev luacheck:lua-check; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing="$missing ${pair#*:}"
done
[ -f /usr/include/utf8proc.h ] || missing="$missing libutf8proc-dev"
command -v ssh-keygen >/dev/null 2>&1 || missing="$missing openssh-client"
[ -x /usr/sbin/sshd ] || missing="$missing openssh-server"
if [ -n "$missing" ]; then
  echo "deps: installing with apt-get:$missing"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $missing
fi

if [ "${1:-}" = "--no-npm" ]; then exit 0; fi

# The Go modules: this commit's (make test builds offline after this: .ci/run
# fetches nothing later), and the agentrun from before serve-stdio that a
# remote test installs on its box (scripts/old-agentrun.sh: its modules
# are older ones; built once, reused).
if ! (cd "$root" && GOPROXY=off "${GO:-go}" list -deps -test ./... >/dev/null 2>&1); then
  echo "deps: downloading the Go modules the build and the tests need (go mod download)"
  (cd "$root" && "${GO:-go}" mod download && "${GO:-go}" list -deps -test ./... >/dev/null)
fi
bash "$root/scripts/old-agentrun.sh" >/dev/null || [ $? -eq 3 ]

# The libvterm sources of every supported Neovim, for the display filter's
# differential fuzzer (make test and make fuzz); fetched ones are reused.
bash "$root/scripts/vterm-src.sh" >/dev/null

# The other Neovim versions the tests run against (0.10, 0.12), in a
# private prefix; nothing to do when they are there.
bash "$root/scripts/nvim-versions.sh" >/dev/null
if [ ! -d "$root/tests/node/node_modules/@agentclientprotocol/sdk" ] || [ ! -d "$root/tests/node/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "deps: installing the npm test peers in tests/node (npm ci: the ACP and MCP TypeScript SDKs)"
  (cd "$root/tests/node" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -d "$root/tests/claude/node_modules/@zed-industries/claude-agent-acp" ] || [ ! -d "$root/tests/claude/node_modules/@agentclientprotocol/claude-agent-acp" ]; then
  echo "deps: installing the real Claude Code ACP agents in tests/claude (npm ci; they run offline against a fake model API)"
  (cd "$root/tests/claude" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -d "$root/tests/codex/node_modules/@agentclientprotocol/codex-acp" ] || [ ! -d "$root/tests/codex/node_modules/@openai/codex" ]; then
  echo "deps: installing the real Codex ACP agent and Codex in tests/codex (npm ci; they run offline against a fake model API)"
  (cd "$root/tests/codex" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -d "$root/tests/gemini/node_modules/@google/gemini-cli" ]; then
  echo "deps: installing the real Gemini CLI in tests/gemini (npm ci; it runs offline against a fake model API)"
  (cd "$root/tests/gemini" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -x "$root/tests/opencode/node_modules/opencode-ai/bin/opencode.exe" ]; then
  echo "deps: installing the real opencode in tests/opencode (npm ci; it runs offline against a fake model API)"
  (cd "$root/tests/opencode" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -d "$root/tests/qwen/node_modules/@qwen-code/qwen-code" ]; then
  echo "deps: installing the real Qwen Code in tests/qwen (npm ci; it runs offline against a fake model API)"
  (cd "$root/tests/qwen" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -d "$root/tests/copilot/node_modules/@github/copilot" ]; then
  echo "deps: installing the real GitHub Copilot CLI in tests/copilot (npm ci; it runs offline against a fake model API)"
  (cd "$root/tests/copilot" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -d "$root/tests/copilot/node_modules/.copilot-cache/pkg" ]; then
  # Copilot CLI unpacks itself (235 MB) at its first start; the tests share
  # one unpacked copy (tests/copilot_test.go), made here, before parts of
  # the suite could start it at once
  echo "deps: unpacking the Copilot CLI once into tests/copilot/node_modules/.copilot-cache"
  (cd "$root/tests/copilot" && HOME="$PWD/node_modules/.copilot-home" COPILOT_PKG_CACHE_HOME="$PWD/node_modules/.copilot-cache" \
    COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false node node_modules/@github/copilot/npm-loader.js --version >/dev/null)
fi
