#!/usr/bin/env bash
# vterm-src.sh fetches the libvterm sources of every supported Neovim, for
# the display filter's differential fuzzer (internal/vtsafe/libvterm_test.go):
#
#   0.1   libvterm 0.1.4 (Debian bookworm; Neovim 0.7.2 links it)
#   0.3   libvterm 0.3.3 (Debian trixie; Neovim 0.10.4 links it)
#   0.12  Neovim 0.12's own port, src/nvim/vterm (Debian sid's neovim source)
#
# Debian's source packages (deb-src) through a private apt configuration
# (its own sources list and lists; the system's apt is not changed),
# unpacked with dpkg-source (Debian's patches applied, as in the binaries).
# Prints the directory holding 0.1/, 0.3/ and 0.12/; fetched ones are reused.
# AGENTRUN_VTERM_PREFIX overrides it.
set -euo pipefail
prefix=${AGENTRUN_VTERM_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/agentrun/vterm}
root=$(cd "$(dirname "$0")/.." && pwd)

mirror() {
  local uri
  uri=$( (cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p'
          cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p') |
         tr ' ' '\n' | grep -v -- '-security' | grep -m1 . || true)
  [ -n "$uri" ] || { echo "vterm-src: found no Debian archive in the apt sources under /etc/apt" >&2; return 1; }
  echo "$uri"
}

# fetch VERSION SUITE PACKAGE: the source package, unpacked into $prefix/VERSION.
fetch() {
  local version=$1 suite=$2 pkg=$3 dir=$prefix/$1
  [ -f "$dir/.done" ] && return 0
  command -v dpkg-source >/dev/null || {
    echo "vterm-src: installing dpkg-dev with apt-get (dpkg-source not found)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q dpkg-dev >&2
  }
  echo "vterm-src: fetching the $pkg source package from Debian $suite into $dir" >&2
  rm -rf "$dir"
  mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/apt/parts" "$dir/dl"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $suite main" >"$dir/apt/sources.list"
  local opts=(
    -o "Dir::Etc::SourceList=$dir/apt/sources.list"
    -o "Dir::Etc::SourceParts=$dir/apt/parts"
    -o "Dir::State::Lists=$dir/apt/lists"
    -o "Dir::Cache=$dir/apt/cache"
    -o "Dir::State::status=/dev/null"
    -o "Debug::NoLocking=true"
    -o "APT::Sandbox::User=root"
    -o "Acquire::Languages=none"
  )
  apt-get "${opts[@]}" -q update >&2
  (cd "$dir/dl" && apt-get "${opts[@]}" -q source --download-only "$pkg" >&2)
  if [ "$pkg" = neovim ]; then
    # Only the vterm port is needed: no dpkg-source of the whole tree.
    local tarball
    tarball=$(ls "$dir"/dl/neovim_*.orig.tar.*)
    mkdir -p "$dir/src"
    tar -xf "$tarball" -C "$dir/src" --strip-components=1 --wildcards '*/src/nvim/vterm/*'
  else
    (cd "$dir/dl" && dpkg-source -q -x ./*.dsc "$dir/src" >&2)
  fi
  rm -rf "$dir/dl" "$dir/apt"
  touch "$dir/.done"
}

fetch 0.1 bookworm libvterm
fetch 0.3 trixie libvterm
fetch 0.12 sid neovim
echo "$prefix"
