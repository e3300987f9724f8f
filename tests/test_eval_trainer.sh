#!/usr/bin/env bash
# tools/eval on what the trainer really writes: a tiny-model run of a few steps through a ring,
# then eval --ckpt RUN_DIR on a synthetic held-out manifest reports the checkpoint's step, and a
# model asked for with another size is refused naming the tensor and both shapes.
set -u
cd "$(dirname "$0")/.."
for p in tools/synth tools/prep tools/eval; do
	[ -x $p ] || { echo "skip: $p not built (needs libav)"; exit 77; }
done
. tests/trainer_testlib.sh
"$RINGCTL" create --ring "$TT_TAG-ev" --frames 2 --height 32 --width 32 --text-len 77 --slots 32 --ranks 1 --seed 7 \
	--replace >/dev/null 2>&1 || fail "ringctl create"
TT_RINGS+=("$TT_TAG-ev")
tt_feeder "$TT_TAG-ev"
"$TRAINER" --ring "$TT_TAG-ev" --model tiny --threads 1 --dataset-size 32 --loss fastclip-v3 --batch-size 8 --steps 3 \
	--run-dir "$TT_DIR/run" 2>"$TT_DIR/trainer.log" || fail "trainer exited $?: $(tail -n 3 "$TT_DIR/trainer.log")"
[ -e "$TT_DIR/run/ckpt/LATEST" ] || fail "the trainer wrote no checkpoint"

tools/synth --out "$TT_DIR/src" --videos 1 --heldout 2 --minutes 0.25 --size 160x96 --fps 10 2>/dev/null || fail synth
tools/prep --annotations "$TT_DIR/src/heldout.csv" --video-root "$TT_DIR/src/videos" --out "$TT_DIR/ho" --chunk-sec 4 \
	--short-side 96 -j 2 2>/dev/null || fail prep
tools/eval --manifest "$TT_DIR/ho/manifest" --ckpt "$TT_DIR/run" --json --quiet >"$TT_DIR/out.json" 2>"$TT_DIR/eval.log" ||
	fail "eval of the run exited $?: $(cat "$TT_DIR/eval.log")"
cat "$TT_DIR/out.json"
grep -q '"step":3,' "$TT_DIR/out.json" || fail "the JSON does not carry the checkpoint's step 3"
grep -q '"source":"[^"]*/run/ckpt/ckpt-00000003.safetensors"' "$TT_DIR/out.json" || fail "the JSON does not name the checkpoint"

if tools/eval --manifest "$TT_DIR/ho/manifest" --ckpt "$TT_DIR/run" --vis-width 32 2>"$TT_DIR/err"; then
	fail "a model of another size was accepted"
fi
cat "$TT_DIR/err"
grep -q 'tensor visual.class_embedding is (64,) in the checkpoint, (32,) in the requested model' "$TT_DIR/err" ||
	fail "the mismatch does not name the tensor and both shapes"
echo "eval reads the trainer's checkpoint and explains a mismatched model"
