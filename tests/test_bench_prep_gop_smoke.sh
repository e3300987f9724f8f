#!/usr/bin/env bash
# make bench-prep-gop's program in its smoke mode (two settings: GOP 8 without B-frames and prep's
# defaults), so the benchmark keeps running; each row has its twelve figures; --help and an unknown
# argument behave.
set -u
cd "$(dirname "$0")/.."
b=${BUILD:-build}/tests/bench_prep_gop
[ -x "$b" ] || { echo "skip: $b is not built (needs libav)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
out=$("$b" --smoke 2>&1)
rc=$?
[ $rc = 77 ] && { echo "skip: $out"; exit 77; }
[ $rc = 0 ] || fail "bench_prep_gop --smoke exited $rc: $out"
echo "$out"
rows=$(grep -cE '^ +[0-9]+( +[^ ]+){11}$' <<<"$out")
[ "$rows" = 2 ] || fail "want 2 rows of 12 figures, got $rows"
grep -qE '^ +32 +7 +none +1 +cavlc ' <<<"$out" || fail "no row of prep's defaults"
"$b" --help | grep -q -- '--smoke' || fail "--help does not describe --smoke"
"$b" --bogus >/dev/null 2>&1 && fail "an unknown argument was taken"
echo "bench-prep-gop's smoke mode measures its two settings"
