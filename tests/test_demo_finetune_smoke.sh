#!/usr/bin/env bash
# make demo-finetune's script in its smoke mode (tools/demo-finetune.sh --smoke): seconds of labelled
# synth data, 6 pretraining steps through launch.sh, export, the probe, 6 fine-tuning steps from the
# exported weights, each checkpoint's held-out classification, plot and the comparison table, so
# the demo cannot rot between its (long) runs. Its figures mean nothing; every stage must run and
# print its rows, and the ratio line comes last.
set -u
cd "$(dirname "$0")/.."
for p in tools/launch.sh tools/synth tools/prep tools/eval tools/export tools/plot trainer/trainer loaderd/loaderd; do
	[ -x "$p" ] || { echo "skip: $p is not built (needs libav)"; exit 77; }
done
out=$(mktemp /tmp/test_demo_finetune_smoke.XXXXXX)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
bash tools/demo-finetune.sh --smoke >"$out" 2>&1 || { tail -n 30 "$out"; fail "demo-finetune.sh --smoke exited non-zero"; }
for stage in "1/5 synthetic dataset" "2/5 pretraining" "3/5 linear probe" "4/5 fine-tuning" "5/5 action recognition"; do
	grep -q "== $stage" "$out" || fail "no stage '$stage': $(cat "$out")"
done
[ "$(grep -c '^   step [0-9]*: action [0-9.]*%, shape [0-9.]*%' "$out")" = 2 ] || fail "not 2 checkpoints scored: $(cat "$out")"
grep -q '^   (action, shape) pair ' "$out" || fail "no comparison table: $(cat "$out")"
# the launcher's last line of figures names each objective's own (no contrastive figures in classify)
grep -qE '^   last metrics, step 6: loss [0-9.]+  nce [0-9.]+  acc [0-9.]+  tau [0-9.]+$' "$out" ||
	fail "no contrastive figures after pretraining: $(grep 'last metrics' "$out")"
grep -qE '^   last metrics, step 6: loss [0-9.]+  top-1 [0-9.]+% / [0-9.]+%$' "$out" ||
	fail "no classification figures after fine-tuning: $(grep 'last metrics' "$out")"
tail -n 1 "$out" | grep -q '^demo-finetune smoke (6 + 6 steps, not checked): fine-tuned / probe / chance top-1: action [0-9.]*% / [0-9.]*% / 8.3%, (action, shape) pair' ||
	fail "the last line is not the ratio line: $(tail -n 1 "$out")"
tail -n 1 "$out"
