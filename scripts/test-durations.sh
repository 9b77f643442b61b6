#!/usr/bin/env bash
# test-durations.sh lists the slowest integration tests of a verbose run:
#   AGENTRUN_TEST_LOGDIR=/tmp/durations bash scripts/integration.sh 0.7 0.10 0.12
#   bash scripts/test-durations.sh /tmp/durations [N]
# Each line: seconds, the log (Neovim and part), the test.
# With --write LOGDIR it writes tests/durations.txt instead: each test's
# seconds (the most of the logs'), which scripts/integration.sh cuts the
# tests into parts of about the same time by.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --write ]; then
	dir=${2:?usage: test-durations.sh --write LOGDIR}
	{
		echo "# seconds per integration test, the most of a verbose run's logs (scripts/test-durations.sh --write)"
		sed -n -E 's/^--- (PASS|FAIL|SKIP): ([^ /]+) \(([0-9.]+)s\)$/\3 \2/p' "$dir"/*.log |
			awk '{ if (!($2 in m) || $1 > m[$2]) m[$2] = $1 } END { for (k in m) printf "%s %s\n", m[k], k }' | sort -k2
	} > tests/durations.txt
	exit 0
fi
dir=${1:?usage: test-durations.sh LOGDIR [N]}
n=${2:-40}
for f in "$dir"/*.log; do
	sed -n -E 's/^--- (PASS|FAIL|SKIP): ([^ ]+) \(([0-9.]+)s\)$/\3 \2/p' "$f" | while read -r secs name; do
		echo "$secs $(basename "$f" .log) $name"
	done
done | sort -rn | head -n "$n"
echo "total seconds by log:"
for f in "$dir"/*.log; do
	printf '%s %s\n' "$(sed -n -E 's/^--- (PASS|FAIL|SKIP): [^ ]+ \(([0-9.]+)s\)$/\2/p' "$f" | paste -sd+ | bc)" "$(basename "$f" .log)"
done
