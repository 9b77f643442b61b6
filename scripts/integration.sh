#!/usr/bin/env bash
# integration.sh runs the Neovim integration tests (./tests) on each
# Neovim version given. The test binary is built once; each version's
# tests are cut into SHARDS parts of about the same time (by
# tests/durations.txt), and JOBS
# parts run at a time, each a process of its own with its own log,
# printed whole when it ends. The suites mostly wait on Neovim, the ptys
# and the agents, not on the CPU: several share the 2 cores well, and
# their processes stay apart by their own runtime directories and
# tests/main_test.go's run marker. The first version given also runs the
# tests whose subject does not change with the local Neovim
# (tests/main_test.go onceAcrossNeovims).
#
# make test runs every test but two sets, which do not change with the
# local Neovim and weigh the most: the tests over SSH (TestRemote*,
# TestSSH*: a private sshd, the remote user's Neovim) and the real agent
# packages' (TestReal*: Claude Code, Codex, Gemini CLI, opencode, Qwen
# Code, Copilot, each offline against a fake model API). make
# test-remote and make test-agents run them (AGENTRUN_TEST_SET=remote,
# on each version given; agents, on the first); CI runs all of them.
#
# Usage: integration.sh VERSION...   (as scripts/nvim-versions.sh takes)
# Environment: AGENTRUN_TEST_JOBS (default 3), AGENTRUN_TEST_SHARDS
# (default 3 per version), AGENTRUN_TEST_SET (above),
# AGENTRUN_TEST_LOGDIR (a folder: each part runs
# verbose and keeps its log there, to see what each test took:
# scripts/test-durations.sh reads them).
set -uo pipefail
cd "$(dirname "$0")/.."

jobs=${AGENTRUN_TEST_JOBS:-3}
shards=${AGENTRUN_TEST_SHARDS:-3}

bins=()
for v in "$@"; do
	bin=$(bash scripts/nvim-versions.sh "$v") || exit 1
	bins+=("$bin")
done
[ ${#bins[@]} -gt 0 ] || exit 0

# offline: where it can (as root), every part runs in a network namespace
# of its own with only the loopback up (unshare -n): the real agents,
# whose fake model APIs listen on 127.0.0.1, can reach nothing else, and
# TestOffline checks that they run so (AGENTRUN_TEST_OFFLINE).
netns=()
if unshare -n ip link set lo up 2>/dev/null; then
	netns=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh)
	echo "== integration tests run offline: a network namespace with only the loopback (unshare -n)"
else
	echo "== integration tests run with the machine's network (unshare -n is not allowed here)"
fi

# which tests: make test's (every one but over SSH and the real agents'),
# or make test-remote's (TestRemote*, TestSSH*: over SSH) or make
# test-agents' (TestReal*)
set_=${AGENTRUN_TEST_SET:-}
case $set_ in
"") pick='^Test(Remote|SSH|Real)' skip=1 ;;
remote) pick='^Test(Remote|SSH)' skip= ;;
agents) pick='^TestReal' skip= ;;
*) echo "integration.sh: AGENTRUN_TEST_SET is remote, agents or empty, not \"$set_\"" >&2; exit 2 ;;
esac
# the real agents' on the first version only; over SSH on each version
# given (the local Neovim's side of a link: 0.12 and 0.7.2 in make
# test-remote; the remote user's is the system's 0.7.2)
[ "$set_" = agents ] && bins=("${bins[0]}")
# a part's time limit: the real agents' run in one part, each agent's
# start taking seconds of CPU (20 s and more on a busy machine)
timeout=15m
[ "$set_" = agents ] && timeout=30m

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${GO:-go}" test -race -c -o "$work/tests.test" ./tests/ || exit 1
# the agentrun the tests run, built once for every part (TestMain builds
# its own when run alone)
"${GO:-go}" build -ldflags "-X main.version=$(cat VERSION)" -o "$work/agentrun" . || exit 1
mapfile -t names < <(cd tests && "$work/tests.test" -test.list "^(Test|Fuzz|Example)" | grep -E "^(Test|Fuzz|Example)" | sort |
	if [ -n "$skip" ]; then grep -v -E "$pick"; else grep -E "$pick"; fi)
[ ${#names[@]} -gt 0 ] || { echo "integration.sh: no tests listed" >&2; exit 1; }

# shard_of: each test's shard, so that the shards take about as long:
# the longest first, each to the shard with the least time so far, by the
# seconds tests/durations.txt gives it (a verbose run's, written by
# scripts/test-durations.sh --write; a test not there counts 3 s)
declare -A shard_of=()
while read -r name sh; do
	shard_of[$name]=$sh
done < <(printf '%s\n' "${names[@]}" | awk -v shards="$shards" '
	FILENAME != "-" { if ($1 !~ /^#/) secs[$2] = $1; next }
	{ n++; name[n] = $1; t[n] = ($1 in secs) ? secs[$1] : 3 }
	END {
		for (i = 1; i <= n; i++) order[i] = i
		for (i = 2; i <= n; i++) { # by time, longest first (insertion sort; ties by name)
			x = order[i]
			for (j = i - 1; j >= 1 && (t[order[j]] < t[x] || (t[order[j]] == t[x] && name[order[j]] > name[x])); j--) order[j + 1] = order[j]
			order[j + 1] = x
		}
		for (i = 1; i <= n; i++) {
			best = 0
			for (s = 1; s < shards; s++) if (load[s] < load[best]) best = s
			load[best] += t[order[i]]
			print name[order[i]], best
		}
	}' "$([ -f tests/durations.txt ] && echo tests/durations.txt || echo /dev/null)" -)

# part VERSION_INDEX SHARD: one shard of one version's run, into its log
part() {
	local i=$1 s=$2 bin=${bins[$1]} once="" re="" k
	[ "$i" -gt 0 ] && [ "$set_" != remote ] && once=1
	for k in "${!names[@]}"; do
		# (the tests over SSH too: each has its own sshd, and its own HOME
		# and runtime directory under the test users' accounts)
		[ "${shard_of[${names[$k]}]}" -eq "$s" ] && re+="${re:+|}${names[$k]}"
	done
	local t0=$SECONDS v=()
	[ -n "${AGENTRUN_TEST_LOGDIR:-}" ] && v=(-test.v)
	(cd tests && AGENTRUN_NVIM=$bin AGENTRUN_TEST_BINARY=$work/agentrun AGENTRUN_ONCE_ACROSS_NEOVIMS=$once AGENTRUN_TEST_OFFLINE=${netns:+1} \
		"${netns[@]}" "$work/tests.test" -test.count=1 -test.timeout=$timeout -test.run "^($re)\$" "${v[@]}") > "$work/log.$i.$s" 2>&1
	local st=$?
	if [ -n "${AGENTRUN_TEST_LOGDIR:-}" ]; then
		mkdir -p "$AGENTRUN_TEST_LOGDIR" && cp "$work/log.$i.$s" "$AGENTRUN_TEST_LOGDIR/$("$bin" --version | head -n1 | tr -d ' ').$((s + 1)).log"
		grep -v -E '^(=== (RUN|PAUSE|CONT)|--- PASS|    --- PASS)' "$work/log.$i.$s" > "$work/log.$i.$s.short"
		mv "$work/log.$i.$s.short" "$work/log.$i.$s"
	fi
	echo $((SECONDS - t0)) > "$work/secs.$i.$s"
	return $st
}

# report VERSION_INDEX SHARD RC: print a part's log under its heading
report() {
	local bin=${bins[$1]}
	echo "== integration tests on $("$bin" --version | head -n1) ($bin), part $(($2 + 1)) of $shards: $([ "$3" -eq 0 ] && echo ok || echo FAILED) in $(cat "$work/secs.$1.$2" 2>/dev/null || echo ?) s"
	if [ "$3" -eq 0 ]; then
		grep -v '^PASS$' "$work/log.$1.$2"
	else
		cat "$work/log.$1.$2"
	fi
}

declare -A running=() # pid -> "i s"
rc=0
# reap waits for one part to end and reports it
reap() {
	local done_pid st di ds
	wait -n -p done_pid
	st=$?
	read -r di ds <<<"${running[$done_pid]}"
	unset "running[$done_pid]"
	report "$di" "$ds" "$st"
	[ "$st" -eq 0 ] || rc=1
}
for i in "${!bins[@]}"; do
	for ((s = 0; s < shards; s++)); do
		while [ ${#running[@]} -ge "$jobs" ]; do
			reap
		done
		part "$i" "$s" &
		running[$!]="$i $s"
	done
done
while [ ${#running[@]} -gt 0 ]; do
	reap
done
exit $rc
