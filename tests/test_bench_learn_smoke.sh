#!/usr/bin/env bash
# make bench-learn's script in its smoke mode (tools/bench/learn.sh --smoke): 64 + 16 images of the
# compose world, 5 steps, openclip and fastclip-v3 on 2 seeds at batch 8 over 2 ranks, through
# launch.sh, eval and the report, so the benchmark cannot rot between its (long) runs. Its figures
# mean nothing; the report must have every row, the paired differences and the summary line last.
# Run again, every run is cached; with one result gone, only that run is redone; bad settings are
# refused naming them.
set -u
cd "$(dirname "$0")/.."
for p in tools/launch.sh tools/synth tools/prep tools/eval trainer/trainer loaderd/loaderd; do
	[ -x "$p" ] || { echo "skip: $p is not built (needs libav)"; exit 77; }
done
command -v python3 >/dev/null || { echo "skip: no python3 for the report"; exit 77; }
d=$(mktemp -d /tmp/test_bench_learn_smoke.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
smoke() { BENCH_LEARN_DIR=$d/out DEMO_DATA=$d/data bash tools/bench/learn.sh --smoke "$@"; }
smoke >"$d/report" 2>"$d/err" || { tail -n 20 "$d/err"; cat "$d/report"; fail "learn.sh --smoke exited non-zero"; }
cat "$d/report"
[ "$(wc -l <"$d/out/results.jsonl")" = 4 ] || fail "results.jsonl: want 4 rows (2 losses x 2 seeds)"
grep -q '^bench-learn: \[4/4\] ' "$d/report" || fail "no progress line for each run"
grep -q '^batch 8 on 2 rank(s) (4 each), 5 steps' "$d/report" || fail "the report does not name the cell"
grep -qE '^fastclip-v3 .* [2]$' "$d/report" || fail "no fastclip-v3 row over 2 seeds"
grep -q 'compose world, images: 16 held-out images' "$d/report" || fail "the report does not say the world and held-out size"
grep -q '^| 8 x 2 | fastclip-v3 |' "$d/out/report.md" || fail "no Markdown table"
tail -n 1 "$d/report" | grep -q '^bench-learn: fastclip-v3 - openclip, t2v R@1 points \[95%\]: 8x2 ' ||
	fail "the summary line is not last: $(tail -n 1 "$d/report")"
grep -q -- '--frames 1 --image-size 32 --ctx-len 16' "$d/out/runs/fastclip-v3-b8-r2-s1/config" || fail "the runs are not of one 32-px frame"
# again: every run is cached; without one result, that run alone is redone, with the same figures
smoke >"$d/again" 2>&1 || fail "the second smoke exited non-zero: $(tail -n 5 "$d/again")"
[ "$(grep -c ': cached$' "$d/again")" = 4 ] || fail "a rerun should find its 4 runs cached: $(cat "$d/again")"
cp "$d/out/runs/openclip-b8-r2-s2/result.json" "$d/before"
rm "$d/out/runs/openclip-b8-r2-s2/result.json"
smoke >"$d/resumed" 2>&1 || fail "the resumed smoke exited non-zero: $(tail -n 5 "$d/resumed")"
[ "$(grep -c ': cached$' "$d/resumed")" = 3 ] && grep -q 'openclip batch 8, 2 rank(s), seed 2: t2v R@1' "$d/resumed" ||
	fail "only the run without a result should be redone: $(cat "$d/resumed")"
python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:])
sys.exit(any(a[k] != b[k] for k in ("t2v_r1", "v2t_r1", "t2v_r5")))' "$d/before" "$d/out/runs/openclip-b8-r2-s2/result.json" ||
	fail "the redone run's figures differ from the first"
for bad in "CELLS=3x" "CELLS=8x3" "LOSSES=infonce"; do
	if env "$bad" bash tools/bench/learn.sh --smoke >/dev/null 2>"$d/err"; then fail "$bad accepted"; fi
	grep -q "${bad%%=*} holds" "$d/err" || fail "$bad: $(cat "$d/err")"
done
if bash tools/bench/learn.sh --world easy >/dev/null 2>"$d/err"; then fail "--world easy accepted"; fi
grep -q "basic, hard or compose" "$d/err" || fail "--world easy: $(cat "$d/err")"
if bash tools/bench/learn.sh --no-such-flag >/dev/null 2>"$d/err"; then fail "an unknown argument was accepted"; fi
grep -q "unknown argument '--no-such-flag'" "$d/err" || fail "unknown argument: $(cat "$d/err")"
if bash tools/bench/learn.sh --images 0 >/dev/null 2>"$d/err"; then fail "--images 0 accepted"; fi
grep -q "positive count" "$d/err" || fail "--images 0: $(cat "$d/err")"
echo "bench-learn's smoke mode runs the whole benchmark, its report and its cache"
