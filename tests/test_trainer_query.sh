#!/usr/bin/env bash
# trainer query NAME: each query answers alone (no --run-dir or ring needed where it asks none);
# an unknown or missing query names the ones there are; the flags the queries were before are
# refused with the query to use, wherever they stand; --help lists every query.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
out=$("$TRAINER" query geometry --model tiny) || fail "query geometry: $out"
[ "$out" = "--frames 2 --height 32 --width 32 --text-len 77" ] || fail "query geometry printed '$out'"
out=$("$TRAINER" query params --model tiny) || fail "query params: $out"
grep -q '"params":[1-9]' <<<"$out" || fail "query params printed '$out'"
out=$("$TRAINER" query resume-position --run-dir "$TT_DIR/none") || fail "query resume-position: $out"
[ "$out" = 0 ] || fail "query resume-position of no run printed '$out'"
out=$("$TRAINER" query 2>&1) && fail "a query without a name passed"
grep -q "which? geometry | steps" <<<"$out" || fail "query without a name: $out"
out=$("$TRAINER" query geometri --model tiny 2>&1) && fail "an unknown query passed"
grep -q "unknown query 'geometri'" <<<"$out" || fail "unknown query: $out"
for old in "--print-geometry:geometry" "--print-steps:steps" "--fit-batch:fit-batch" "--check-start:check-start" \
	"--comm-create:comm-create" "--resume-position:resume-position"; do
	out=$("$TRAINER" --model tiny "${old%%:*}" 2>&1) && fail "${old%%:*} was taken"
	grep -q -- "${old%%:*} is now a query: trainer query ${old##*:}" <<<"$out" || fail "${old%%:*}: $out"
done
out=$("$TRAINER" --print-steps=1 2>&1) && fail "--print-steps=1 was taken"
grep -q "is now a query" <<<"$out" || fail "--print-steps=1: $out"
help=$("$TRAINER" --help)
for q in geometry steps params fit-batch resume-position check-start comm-create comm-unlink; do
	grep -q "trainer query $q " <<<"$help" || fail "--help does not list query $q"
done
echo "ok: trainer queries"
