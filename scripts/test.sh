#!/usr/bin/env bash
# test.sh is make test after its builds: luacheck and the Lua unit tests,
# then the Go unit tests (make test-go) beside the Neovim integration
# tests (scripts/integration.sh): the unit tests mostly compute and the
# integration tests mostly wait, so they share the 2 cores well. The
# unit tests' output is printed whole when they end; each part says what
# it took. Usage: test.sh VERSION... (as NVIM_VERSIONS); LUA_VERSIONS
# (the Lua unit tests' versions; default the same), GO, MAKE.
set -uo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
t0=$SECONDS
echo "== luacheck (.luacheckrc)"
luacheck lua plugin build.lua tests/unit -q --formatter plain || exit 1
# shellcheck disable=SC2086 # the versions, as words
bash scripts/lua-unit.sh ${LUA_VERSIONS:-"$@"} || exit 1
src=$(bash scripts/vterm-src.sh) || exit 1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
unit_t0=$SECONDS
"$make" --no-print-directory test-go VTERM_SRC="$src" >"$log" 2>&1 &
unit=$!
GO=${GO:-go} bash scripts/integration.sh "$@"
irc=$?
wait "$unit"
urc=$?
echo "== Go unit tests (make test-go): $([ $urc -eq 0 ] && echo ok || echo FAILED); they ended $((SECONDS - unit_t0)) s after they started"
cat "$log"
echo "== make test: $([ $irc -eq 0 ] && [ $urc -eq 0 ] && echo ok || echo FAILED) in $((SECONDS - t0)) s after the builds"
[ $irc -eq 0 ] && [ $urc -eq 0 ]
