#!/usr/bin/env bash
# Runs test programs one by one under a per-test timeout: exit 0 pass, 77 skip, else fail.
# Prints one line per test ("PASS  [k/N] name  secs"), the log tail of failures (after the log's
# first lines that start with FAIL, when the tail lacks them), and a closing
# "N passed, N failed, N skipped".
# A test is named by its path or by the name this prints (test_launch is tests/test_launch.sh,
# test_ring_kill is build/tests/test_ring_kill), so a failure can be rerun as printed.
set -u
build=${BUILD:-build}
limit=${TEST_TIMEOUT:-300}
logdir=$build/test-logs
mkdir -p "$logdir"
pass=0 fail=0 skip=0 failed=() k=0 total=$#
kw=${#total} # [k/N] with k as wide as N, so the names line up
resolve() { # resolve ARG: the test file ARG names
	local n=${1##*/}
	n=${n%.sh}
	local c
	for c in "$1" "$build/tests/$n" "tests/$n.sh"; do
		[ -f "$c" ] && { echo "$c"; return 0; }
	done
	echo "$1"
}
for t in "$@"; do
	t=$(resolve "$t")
	name=$(basename "$t")
	name=${name%.sh}
	log=$logdir/$name.log
	k=$((k + 1))
	at=$(printf '[%*d/%d]' "$kw" "$k" "$total")
	start=$(date +%s.%N)
	if [[ $t == *.sh ]]; then
		BUILD=$build timeout -k 10 "$limit" bash "$t" >"$log" 2>&1
	else
		BUILD=$build timeout -k 10 "$limit" "$t" >"$log" 2>&1
	fi
	rc=$?
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS  %s %-36s %6ss\n' "$at" "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf 'SKIP  %s %-36s %6ss  %s\n' "$at" "$name" "$secs" "$(tail -n 1 "$log")" ;;
	*)
		fail=$((fail + 1)); failed+=("$name")
		[ $rc = 124 ] && why="timed out after ${limit}s" || why="exit $rc"
		printf 'FAIL  %s %-36s %6ss  (%s, log: %s)\n' "$at" "$name" "$secs" "$why" "$log"
		# the lines that say what failed, when the tail does not hold them (a test that prints
		# its logs after its verdict), then the tail
		lines=$(wc -l <"$log")
		[ "$lines" -gt 20 ] && head -n $((lines - 20)) "$log" | grep -E -m 5 '^FAIL[: ]' | sed 's/^/      | (above) /'
		tail -n 20 "$log" | sed 's/^/      | /'
		;;
	esac
done
[ $fail -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
