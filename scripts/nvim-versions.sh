#!/usr/bin/env bash
# nvim-versions.sh installs the Neovim versions the tests run against, next
# to the system's own (Debian 12's 0.7.2), without touching the system:
#
#   0.10  from Debian trixie
#   0.12  from Debian sid
#
# For each, a private apt configuration (its own sources list, package
# lists and cache; an empty dpkg status) downloads neovim's dependency
# closure, `dpkg -x` unpacks it into a private prefix, and patchelf points
# the nvim binary at the unpacked loader and libraries (interpreter and
# DT_RPATH), so nvim runs on the newer glibc it was built for while its
# child processes (the plugin's backend, the commands it runs) use the
# system's as usual. A wrapper sets VIM/VIMRUNTIME to the unpacked runtime.
#
# Usage: nvim-versions.sh [VERSION...]   (default: 0.10 0.12)
# Prints the path of each Neovim on stdout, one per line, and what it
# installs on stderr. Installed versions are reused. VERSION 0.7 is the
# system's nvim (Debian 12's, which deps.sh installs).
# AGENTRUN_NVIM_PREFIX overrides the prefix.
set -euo pipefail

prefix=${AGENTRUN_NVIM_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/agentrun/nvim}
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo "$(uname -m)-linux-gnu")

suite_of() {
  case "$1" in
    0.10) echo trixie ;;
    0.12) echo sid ;;
    *) echo "nvim-versions: no Debian suite is known to ship Neovim $1 (known: 0.10, 0.12)" >&2; return 1 ;;
  esac
}

# mirror prints the URI of the system's Debian archive (not the security
# one), from its apt sources, so the newer suites come from the same place.
mirror() {
  local uri
  uri=$( (cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p'
          cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p') |
         tr ' ' '\n' | grep -v -- '-security' | grep -m1 . || true)
  if [ -z "$uri" ]; then
    echo "nvim-versions: found no Debian archive in the apt sources under /etc/apt; cannot fetch newer Neovim" >&2
    return 1
  fi
  echo "$uri"
}

need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "nvim-versions: installing $2 with apt-get ($1 not found)" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "$2" >&2 ||
    { $sudo apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "$2" >&2; }
}

install_version() {
  local version=$1 suite dir root wrapper
  if [ "$version" = 0.7 ]; then
    command -v nvim || { echo "nvim-versions: no nvim on \$PATH (make deps installs Debian's 0.7.2)" >&2; return 1; }
    return 0
  fi
  suite=$(suite_of "$version")
  dir=$prefix/$suite
  root=$dir/root
  wrapper=$prefix/bin/nvim-$version
  if [ -x "$wrapper" ] && "$wrapper" --version >/dev/null 2>&1; then
    echo "$wrapper"
    return 0
  fi
  need patchelf patchelf
  echo "nvim-versions: installing Neovim $version from Debian $suite into $dir (private prefix; the system is not changed)" >&2
  rm -rf "$dir"
  mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/apt/preferences.d" "$dir/debs" "$root" "$prefix/bin"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $suite main" >"$dir/apt/sources.list"
  local opts=(
    -o "Dir::Etc::SourceList=$dir/apt/sources.list"
    -o "Dir::Etc::SourceParts=$dir/apt/preferences.d"
    -o "Dir::Etc::PreferencesParts=$dir/apt/preferences.d"
    -o "Dir::State::Lists=$dir/apt/lists"
    -o "Dir::Cache=$dir/apt/cache"
    -o "Dir::State::status=/dev/null"
    -o "APT::Architecture=$arch"
    -o "Debug::NoLocking=true"
    -o "APT::Sandbox::User=root"
    -o "Acquire::Languages=none"
  )
  apt-get "${opts[@]}" -q update >&2
  # Every package neovim needs, recursively (an empty status: nothing counts as installed).
  local pkgs
  pkgs=$(apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
           --no-breaks --no-replaces --no-enhances neovim | grep '^[a-z0-9]' | sort -u)
  (cd "$dir/debs" && apt-get "${opts[@]}" -q download $pkgs >&2)
  local deb
  for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$root"; done
  local libdirs="$root/usr/lib/$multiarch:$root/lib/$multiarch"
  local loader="" f
  for f in "$root"/usr/lib/"$multiarch"/ld-linux*.so.* "$root"/lib/"$multiarch"/ld-linux*.so.*; do
    [ -e "$f" ] && { loader=$f; break; }
  done
  [ -n "$loader" ] || { echo "nvim-versions: no dynamic loader in the unpacked libc6 of $suite" >&2; return 1; }
  patchelf --set-interpreter "$loader" --force-rpath --set-rpath "$libdirs" "$root/usr/bin/nvim"
  cat >"$wrapper" <<EOF
#!/bin/sh
# Neovim $version from Debian $suite, unpacked by scripts/nvim-versions.sh.
VIM='$root/usr/share/nvim' VIMRUNTIME='$root/usr/share/nvim/runtime' exec '$root/usr/bin/nvim' "\$@"
EOF
  chmod +x "$wrapper"
  rm -rf "$dir/debs" "$dir/apt/cache"
  local got
  got=$("$wrapper" --version | head -n1)
  case "$got" in
    "NVIM v$version".*) ;;
    *) echo "nvim-versions: note: Debian $suite now ships $got, not $version" >&2 ;;
  esac
  echo "nvim-versions: $got installed as $wrapper" >&2
  echo "$wrapper"
}

[ $# -gt 0 ] || set -- 0.10 0.12
for v in "$@"; do install_version "$v"; done
