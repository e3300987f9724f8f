#!/usr/bin/env bash
# make bench-cpu's program in its smoke mode (bench_trainer_cpu --smoke: one step of the tiny model
# in both precisions in each slot, one matmul round), so the benchmark keeps running between its
# (minutes-long) runs; its figures mean nothing, its lines must all be there. A batch of one, which
# a contrastive step cannot take, is refused.
set -u
cd "$(dirname "$0")/.."
b=${BUILD:-build}/tests/bench_trainer_cpu
[ -x "$b" ] || { echo "skip: $b is not built (needs BLAS)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
out=$("$b" --smoke --threads 2 2>&1) || fail "bench_trainer_cpu --smoke exited non-zero: $out"
echo "$out"
[ "$(grep -c '^step tiny ' <<<"$out")" = 4 ] || fail "want four step lines"
[ "$(grep -c 'phases, ms: upload' <<<"$out")" = 4 ] || fail "want four phase lines"
grep -q '^matmul vit-s16 block linears .* best of 1:' <<<"$out" || fail "no matmul line"
tail -n 1 <<<"$out" | grep -qE '^ratio linear/sgemm: [0-9.]+$' || fail "the ratio line is not last"
out=$("$b" --vits-batch 1 2>&1) && fail "--vits-batch 1 was taken"
grep -q -- "--vits-batch" <<<"$out" || fail "--vits-batch 1: $out"
echo "bench-cpu's smoke mode runs every part of the bench"
