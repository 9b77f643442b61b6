#!/usr/bin/env bash
# integration.sh runs the Neovim integration tests (./tests) on each
# Neovim version given, newest first. The first runs alone, with the
# tests whose subject does not change with the local Neovim (over SSH, the
# real agent packages: tests/main_test.go onceAcrossNeovims); the others
# then run side by side, each into a log printed whole when it ends (the
# suites mostly wait on Neovim and the ptys: two share the 2 cores well,
# and their processes stay apart by their own runtime directories and
# tests/main_test.go's run marker).
#
# Usage: integration.sh VERSION...   (as scripts/nvim-versions.sh takes)
set -uo pipefail
cd "$(dirname "$0")/.."

suite() { # suite BIN ONCE: one version's run
	AGENTRUN_NVIM=$1 AGENTRUN_ONCE_ACROSS_NEOVIMS=$2 "${GO:-go}" test -race -count=1 -timeout 8m ./tests/
}

bins=()
for v in "$@"; do
	bin=$(bash scripts/nvim-versions.sh "$v") || exit 1
	bins+=("$bin")
done
[ ${#bins[@]} -gt 0 ] || exit 0

first=${bins[0]}
echo "== integration tests on $("$first" --version | head -n1) ($first)"
suite "$first" "" || exit 1

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for i in "${!bins[@]}"; do
	[ "$i" -eq 0 ] && continue
	suite "${bins[$i]}" 1 > "$logs/$i" 2>&1 &
	pids[$i]=$!
done
rc=0
for i in "${!bins[@]}"; do
	[ "$i" -eq 0 ] && continue
	wait "${pids[$i]}" || rc=1
	echo "== integration tests on $("${bins[$i]}" --version | head -n1) (${bins[$i]}, beside the others)"
	cat "$logs/$i"
done
exit $rc
