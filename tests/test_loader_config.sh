#!/usr/bin/env bash
# loaderd's config table: --help lists every option with bounds and defaults, out-of-range and
# unknown values are refused with a message naming the option, the effective config is logged.
set -u
bin=loaderd/loaderd
[ -x "$bin" ] || { echo "skip: $bin is not built"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
help=$("$bin" --help) || fail "--help exited non-zero"
for opt in --ring --manifest --numa-node --threads --queue-depth --seed --train --eval --flip --timeout-ms --io --log-level; do
	grep -q -- "$opt" <<<"$help" || fail "--help does not list $opt"
done
grep -q "\[1, 256\] (default 1)" <<<"$help" || fail "--help lacks the bounds of --threads"
out=$("$bin" --manifest /nonexistent --threads 0 2>&1) && fail "--threads 0 accepted"
grep -q -- "--threads 0 is outside \[1, 256\]" <<<"$out" || fail "unclear message: $out"
out=$("$bin" --manifest /nonexistent --io uring 2>&1) && fail "--io uring accepted"
grep -q -- "--io" <<<"$out" || fail "unclear message: $out"
out=$("$bin" --bogus 2>&1) && fail "--bogus accepted"
grep -q "unknown flag --bogus" <<<"$out" || fail "unclear message: $out"
out=$("$bin" --threads 2 2>&1) && fail "missing --manifest accepted"
grep -q -- "--manifest FILE is required" <<<"$out" || fail "unclear message: $out"
out=$("$bin" --manifest /nonexistent/m.bin --threads 3 --eval 2>&1) && fail "missing manifest accepted"
grep -q "config: ring=avclip manifest=/nonexistent/m.bin numa-node=-1 threads=3 .* eval" <<<"$out" || fail "no effective config line: $out"
grep -q "loaderd\[[0-9]*\] fatal: manifest /nonexistent/m.bin" <<<"$out" || fail "fatal line does not name the process and file: $out"
echo "config table: help, bounds, errors and the effective config line ok"
