#!/usr/bin/env bash
# make bench-plan's smoke mode: the tiny model's step computed and dry records the same ops, the
# model's matrix-product FLOPs match 3 x model_flops_per_sample x B, and (the shim build of the CUDA
# backend, bench_plan_emu) every launch of the step falls inside a recorded op and the step through
# CUDA graphs launches less than half as often; then one small dry
# plan prints its table and its predicted time. About 10 s on 2 cores.
set -u
cd "$(dirname "$0")/.."
b=${BUILD:-build}/tests
[ -x "$b/bench_plan" ] || { echo "skip: $b/bench_plan is not built"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
out=$("$b/bench_plan" --smoke) || { echo "$out"; fail "bench_plan --smoke"; }
echo "$out"
grep -q "computed vs dry on the CPU backend: .* identical" <<<"$out" || fail "no computed-vs-dry check"
if [ -x "$b/bench_plan_emu" ]; then
	out=$("$b/bench_plan_emu" --smoke) || { echo "$out"; fail "bench_plan_emu --smoke"; }
	echo "$out" | grep '^check:'
	grep -q "CUDA backend queued .* launches in the step" <<<"$out" || fail "the shim build did not check launches"
	grep -q "through CUDA graphs [0-9]* (cuda graph: captured" <<<"$out" || fail "the shim build did not count graphs"
fi
out=$("$b/bench_plan" --model vit-s16 --frames 2 --batch-size 4) || { echo "$out"; fail "a dry vit-s16 plan"; }
grep -q "^predicted step time" <<<"$out" || fail "no predicted step time: $out"
if "$b/bench_plan" --model no-such >/dev/null 2>&1; then fail "an unknown preset was accepted"; fi
echo "bench-plan's smoke mode and a small dry plan run"
