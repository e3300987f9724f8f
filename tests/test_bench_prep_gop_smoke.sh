#!/usr/bin/env bash
# make bench-prep-gop's program in its smoke mode (the camera-like source, prep's defaults and the
# previous defaults), so the benchmark keeps running: each row has its settings, size, PSNR and three
# clip costs; the ratio line comes last; --help, a bad --set and an unknown argument behave.
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
num='[0-9]+(\.[0-9]+)?'
cost=" +\| +$num +$num +-"
rows=$(grep -cE "^  cam +[0-9]+ +[0-9]+ +[a-z-]+ +[a-z-]+ +[0-9]+ +ca[a-z]+ +o[nf]+ +[a-z]+ +[0-9]+ +$num +$num($cost){3}\$" <<<"$out")
[ "$rows" = 2 ] || fail "want 2 rows of settings, size, PSNR and three clip costs, got $rows"
grep -qE '^  cam +32 +7 +fixed +none +1 +cavlc +off +qpel +22 ' <<<"$out" || fail "no row of prep's defaults"
grep -qE '^  cam +32 +7 +adapt +none +1 +cavlc +on +qpel +23 ' <<<"$out" || fail "no row of the previous defaults"
tail -n 1 <<<"$out" | grep -qE "^ratio previous defaults .*: cam $num""x $num""x $num""x \(" || fail "the ratio line is not last"
"$b" --help | grep -q -- '--smoke' || fail "--help does not describe --smoke"
"$b" --set gop=0 >/dev/null 2>&1 && fail "--set gop=0 was taken"
"$b" --bogus >/dev/null 2>&1 && fail "an unknown argument was taken"
echo "bench-prep-gop's smoke mode measures its two settings"
