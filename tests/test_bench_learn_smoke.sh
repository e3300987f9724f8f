#!/usr/bin/env bash
# make bench-learn's script in its smoke mode (tools/bench/learn.sh --smoke): a dataset of
# seconds of the hard world, 5 steps, openclip and fastclip-v3 on 2 seeds at batch 32, through launch.sh, eval and the report,
# so the benchmark cannot rot between its (long) runs. Its figures mean nothing; the report must
# have every row and the paired differences; the image-text variant once. About 40 s on 2 cores.
set -u
cd "$(dirname "$0")/.."
for p in tools/launch.sh tools/synth tools/prep tools/eval trainer/trainer loaderd/loaderd; do
	[ -x "$p" ] || { echo "skip: $p is not built (needs libav)"; exit 77; }
done
command -v python3 >/dev/null || { echo "skip: no python3 for the report"; exit 77; }
d=$(mktemp -d /tmp/test_bench_learn_smoke.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
BENCH_LEARN_DIR=$d/out DEMO_DATA=$d/data bash tools/bench/learn.sh --smoke >"$d/report" 2>"$d/err" ||
	{ tail -n 20 "$d/err"; cat "$d/report"; fail "learn.sh --smoke exited non-zero"; }
cat "$d/report"
n=$(wc -l <"$d/out/results-b32.jsonl")
[ "$n" = 8 ] || fail "results-b32.jsonl has $n rows, want 8 (2 losses x 2 seeds x 2 hit rules)"
grep -q '^fastclip-v3 .*(2) .*(2) .*(2)$' "$d/report" || fail "no paired differences over 2 seeds for fastclip-v3"
grep -q '^bench-learn: t2v R@1 (caption hits) openclip' "$d/report" || fail "no summary line"
grep -q 'batch 32, tiny model, hard world' "$d/report" || fail "the report does not say the batch and world"
# the image-text variant: synth's images of the hard world, a model of one frame
SEEDS=1 LOSSES=fastclip-v3 BENCH_LEARN_DIR=$d/img DEMO_DATA=$d/imgdata bash tools/bench/learn.sh --smoke --images 64 \
	>"$d/img-report" 2>"$d/err" || { tail -n 20 "$d/err"; fail "learn.sh --smoke --images exited non-zero"; }
[ "$(wc -l <"$d/img/results-b32.jsonl")" = 2 ] || fail "the image variant's results: $(cat "$d/img/results-b32.jsonl")"
grep -q 'hard-images world, 16 held-out' "$d/img-report" || fail "the image report: $(head -n 2 "$d/img-report")"
grep -q -- '--frames 1' "$d/img/fastclip-v3-b32-seed1/launch.conf" 2>/dev/null ||
	grep -rq -- '--frames 1' "$d/img/fastclip-v3-b32-seed1/logs" || fail "the image runs are not of one frame"
if BATCHES=3x bash tools/bench/learn.sh --smoke >/dev/null 2>"$d/err"; then fail "BATCHES=3x accepted"; fi
grep -q "not a batch size" "$d/err" || fail "BATCHES=3x: $(cat "$d/err")"
if bash tools/bench/learn.sh --world easy >/dev/null 2>"$d/err"; then fail "--world easy accepted"; fi
grep -q "basic or hard" "$d/err" || fail "--world easy: $(cat "$d/err")"
if bash tools/bench/learn.sh --no-such-flag >/dev/null 2>"$d/err"; then fail "an unknown argument was accepted"; fi
grep -q "unknown argument '--no-such-flag'" "$d/err" || fail "unknown argument: $(cat "$d/err")"
if bash tools/bench/learn.sh --heldout-videos 0 >/dev/null 2>"$d/err"; then fail "--heldout-videos 0 accepted"; fi
grep -q "positive count" "$d/err" || fail "--heldout-videos 0: $(cat "$d/err")"
echo "bench-learn's smoke mode runs the whole benchmark and its report"
