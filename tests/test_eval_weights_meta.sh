#!/usr/bin/env bash
# tools/eval --weights takes the sizes and --act that tools/export recorded in the file: a QuickGELU
# run exported and evaluated without --act runs as QuickGELU and scores as its checkpoint does
# (test_export_roundtrip checks the features bit for bit), and a size flag or --act that
# contradicts the file is refused naming both values.
set -u
cd "$(dirname "$0")/.."
for p in tools/synth tools/prep tools/eval tools/export; do
	[ -x $p ] || { echo "skip: $p not built (needs libav)"; exit 77; }
done
. tests/trainer_testlib.sh
"$RINGCTL" create --ring "$TT_TAG-wm" --frames 2 --height 32 --width 32 --text-len 77 --slots 32 --ranks 1 --seed 7 \
	--replace >/dev/null 2>&1 || fail "ringctl create"
TT_RINGS+=("$TT_TAG-wm")
tt_feeder "$TT_TAG-wm"
"$TRAINER" --ring "$TT_TAG-wm" --model tiny --act quickgelu --threads 1 --dataset-size 32 --batch-size 8 --steps 2 \
	--run-dir "$TT_DIR/run" 2>"$TT_DIR/trainer.log" || fail "trainer exited $?: $(tail -n 3 "$TT_DIR/trainer.log")"
tools/export "$TT_DIR/run" --out "$TT_DIR/w.safetensors" 2>"$TT_DIR/export.log" || fail "export: $(cat "$TT_DIR/export.log")"

tools/synth --out "$TT_DIR/src" --videos 1 --heldout 2 --minutes 0.25 --size 160x96 --fps 10 2>/dev/null || fail synth
tools/prep --annotations "$TT_DIR/src/heldout.csv" --video-root "$TT_DIR/src/videos" --out "$TT_DIR/ho" --chunk-sec 4 \
	--short-side 96 -j 2 2>/dev/null || fail prep
ev() { tools/eval --manifest "$TT_DIR/ho/manifest" --json --quiet "$@"; }
# the figures without the fields that name the source or time the run
figures() { sed -E 's/"(step|source|embed_s|total_s)":("[^"]*"|-?[0-9.]+),?//g' "$1"; }
ev --ckpt "$TT_DIR/run" >"$TT_DIR/ckpt.json" 2>"$TT_DIR/eval.log" || fail "eval --ckpt: $(cat "$TT_DIR/eval.log")"
tools/eval --manifest "$TT_DIR/ho/manifest" --json --weights "$TT_DIR/w.safetensors" >"$TT_DIR/w.json" \
	2>"$TT_DIR/eval.log" || fail "eval --weights: $(cat "$TT_DIR/eval.log")"
grep -q 'model \[img32 p8 T2 v64/2/2 V49408 ctx77 t64/2/2 E64 mlp4 quickgelu\] from .*w.safetensors' "$TT_DIR/eval.log" ||
	fail "eval --weights without --act did not run the file's QuickGELU model: $(cat "$TT_DIR/eval.log")"
[ "$(figures "$TT_DIR/ckpt.json")" = "$(figures "$TT_DIR/w.json")" ] ||
	fail "the exported weights score otherwise than their checkpoint: $(cat "$TT_DIR/ckpt.json" "$TT_DIR/w.json")"
ev --weights "$TT_DIR/w.safetensors" --model tiny --act quickgelu --vis-heads 2 >"$TT_DIR/w2.json" 2>"$TT_DIR/eval.log" ||
	fail "flags that repeat the file's sizes were refused: $(cat "$TT_DIR/eval.log")"

refused() { # want-in-the-message flags...
	local want=$1
	shift
	if ev --weights "$TT_DIR/w.safetensors" "$@" >/dev/null 2>"$TT_DIR/err"; then
		fail "eval --weights $* was accepted by a file that records otherwise"
	fi
	grep -qF -- "$want" "$TT_DIR/err" || fail "eval --weights $*: the refusal does not say '$want': $(cat "$TT_DIR/err")"
	cat "$TT_DIR/err"
}
refused "--vis-heads is 2 in the weights, 4 in the requested model" --vis-heads 4
refused "--act is quickgelu in the weights, gelu in the requested model" --act gelu
refused "tensor visual.class_embedding is (64,) in the weights, (384,) in the requested model" --model vit-s16
echo "eval --weights follows the file's sizes and activation and refuses flags that contradict them"
