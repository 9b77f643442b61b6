#!/usr/bin/env bash
# lua-unit.sh runs the Lua unit tests (tests/unit/run.lua) in headless
# Neovim, once per version given (as scripts/nvim-versions.sh takes them;
# default 0.7, the system's). No backend, no agent: pure Lua.
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
for v in "${@:-0.7}"; do
  bin=$(bash scripts/nvim-versions.sh "$v") || exit 1
  echo "== Lua unit tests on $("$bin" --version | head -n1)"
  "$bin" --headless --clean -n -i NONE --cmd "set rtp^=$PWD" -c "luafile tests/unit/run.lua" </dev/null || rc=1
done
exit $rc
