#!/usr/bin/env bash
# loaderd's config table: --help lists every option with bounds and defaults, out-of-range and
# unknown values are refused with a message naming the option, the effective config is logged.
set -u
bin=loaderd/loaderd
[ -x "$bin" ] || { echo "skip: $bin is not built"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
help=$("$bin" --help) || fail "--help exited non-zero"
for opt in --ring --manifest --numa-node --workers --queue-depth --seed --train --eval --flip --timeout-ms --io --log-level --bench --bench-clip --for; do
	grep -q -- "$opt" <<<"$help" || fail "--help does not list $opt"
done
grep -q "\[1, 256\] (default 1)" <<<"$help" || fail "--help lacks the bounds of --workers"
grep -qE -- '^  --threads' <<<"$help" && fail "--help lists the old name --threads"
out=$("$bin" --manifest /nonexistent --workers 0 2>&1) && fail "--workers 0 accepted"
grep -q -- "--workers 0 is outside \[1, 256\]" <<<"$out" || fail "unclear message: $out"
out=$("$bin" --manifest /nonexistent --io uring 2>&1) && fail "--io uring accepted"
grep -q -- "--io" <<<"$out" || fail "unclear message: $out"
out=$("$bin" --bogus 2>&1) && fail "--bogus accepted"
grep -q "unknown flag --bogus" <<<"$out" || fail "unclear message: $out"
out=$("$bin" --workers 2 2>&1) && fail "missing --manifest accepted"
grep -q -- "--manifest FILE is required" <<<"$out" || fail "unclear message: $out"
out=$("$bin" --manifest /nonexistent/m.bin --workers 3 --eval 2>&1) && fail "missing manifest accepted"
grep -q "config: ring=avclip manifest=/nonexistent/m.bin numa-node=-1 workers=3 .* eval" <<<"$out" || fail "no effective config line: $out"
# the old name still works, with a warning naming the new one
out=$("$bin" --manifest /nonexistent/m.bin --threads 3 2>&1) && fail "missing manifest accepted"
grep -q "warn: --threads is now called --workers" <<<"$out" || fail "no warning for the old name --threads: $out"
grep -q "config: .* workers=3 " <<<"$out" || fail "--threads 3 did not set --workers: $out"
grep -q "loaderd\[[0-9]*\] fatal: manifest /nonexistent/m.bin" <<<"$out" || fail "fatal line does not name the process and file: $out"
echo "config table: help, bounds, errors and the effective config line ok"
