#!/usr/bin/env bash
# tests/run.sh, which make test runs: every line says where it is ("PASS  [k/N] name"), the
# counter as wide as N so the names line up, and the closing line stays exactly
# "N passed, N failed, N skipped" (scripts read it); a failure shows its FAIL line even when the
# log's last 20 lines, which it also shows, do not hold it.
set -u
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in 01 02 03 04 05 06 07 08 09 10; do printf 'exit 0\n' >"$tmp/t_pass$i.sh"; done
printf 'echo "skip: nothing here"\nexit 77\n' >"$tmp/t_skip.sh"
# the verdict, then 30 lines of logs: the verdict must still be shown
printf 'echo "FAIL: the check that broke"\nseq 30\nexit 1\n' >"$tmp/t_fail.sh"
BUILD=$tmp/build bash tests/run.sh "$tmp"/t_pass*.sh "$tmp/t_skip.sh" "$tmp/t_fail.sh" >"$tmp/out" 2>&1 && fail "a failing test passed the run"
grep -qE '^PASS  \[ 1/12\] t_pass01 ' "$tmp/out" || fail "no '[ 1/12]' on the first line: $(head -n 1 "$tmp/out")"
grep -qE '^PASS  \[10/12\] t_pass10 ' "$tmp/out" || fail "no '[10/12]': $(sed -n 10p "$tmp/out")"
grep -qE '^SKIP  \[11/12\] t_skip .*skip: nothing here$' "$tmp/out" || fail "the skip line: $(grep SKIP "$tmp/out")"
grep -qE '^FAIL  \[12/12\] t_fail .*\(exit 1, log: ' "$tmp/out" || fail "the fail line: $(grep FAIL "$tmp/out")"
grep -q '^      | (above) FAIL: the check that broke$' "$tmp/out" || fail "the verdict above the tail is not shown: $(cat "$tmp/out")"
grep -q '^      | 30$' "$tmp/out" || fail "the log's tail is not shown"
[ "$(tail -n 1 "$tmp/out")" = "10 passed, 1 failed, 1 skipped" ] || fail "the closing line changed: $(tail -n 1 "$tmp/out")"
echo "ok: [k/N] on every line, a failure's verdict and tail, the closing line as before"
