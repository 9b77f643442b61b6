#!/usr/bin/env bash
# old-agentrun.sh builds the agentrun from before serve-stdio (the commit
# before internal/sshlink came, when its package was still sshlink/ at the
# top), which TestRemoteWithoutAMatchingAgentrun installs on the test box
# to check what an agentrun too old to serve over SSH is told. That commit
# needs Go modules the current one does not (older golang.org/x/sys and
# x/term): make deps runs this script online, so the test, which runs
# offline, finds the binary built.
#
# Prints the binary's path on stdout; what it builds on stderr. A built
# one is reused. Exits 3 (and prints nothing) in a clone without that
# history (a shallow clone). AGENTRUN_OLD_PREFIX overrides where it goes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
added=$(git -C "$root" log --format=%H --diff-filter=A -1 -- sshlink/doc.go 2>/dev/null || true)
if [ -z "$added" ]; then
  echo "old-agentrun: no git history to build an agentrun from before serve-stdio (a shallow clone?)" >&2
  exit 3
fi
prefix=${AGENTRUN_OLD_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/agentrun/old}
bin=$prefix/$added/agentrun
if [ ! -x "$bin" ]; then
  echo "old-agentrun: building the agentrun of ${added:0:12}^ (before serve-stdio) into $prefix" >&2
  src=$(mktemp -d)
  trap 'chmod -R u+w "$src" 2>/dev/null; rm -rf "$src"' EXIT
  git -C "$root" archive "$added^" | tar -x -C "$src"
  mkdir -p "$(dirname "$bin")"
  (cd "$src" && "${GO:-go}" build -ldflags "-X main.version=0.0.8" -o "$bin.tmp" .)
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
