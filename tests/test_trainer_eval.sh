#!/usr/bin/env bash
# --eval-manifest: rank 0 evaluates held-out retrieval every K steps and at the end from the
# evaluation ring a loaderd --eval fills (the trainer decodes nothing), appending one JSON line
# per evaluation (with its step) to RUN_DIR/eval.jsonl; a manifest the model cannot read, or a
# missing evaluation ring, is refused at start with one line.
set -u
cd "$(dirname "$0")/.."
for p in tools/synth tools/prep loaderd/loaderd; do
	[ -x $p ] || { echo "skip: $p not built (needs libav)"; exit 77; }
done
. tests/trainer_testlib.sh
tools/synth --out "$TT_DIR/src" --videos 1 --heldout 2 --minutes 0.25 --size 160x96 --fps 10 2>/dev/null || fail synth
tools/prep --annotations "$TT_DIR/src/heldout.csv" --video-root "$TT_DIR/src/videos" --out "$TT_DIR/ho" --chunk-sec 4 \
	--short-side 96 -j 2 2>/dev/null || fail prep
"$RINGCTL" create --ring "$TT_TAG-ev" --frames 2 --height 32 --width 32 --text-len 77 --slots 32 --seed 7 --replace \
	>/dev/null 2>&1 || fail "ringctl create"
TT_RINGS+=("$TT_TAG-ev")
tt_feeder "$TT_TAG-ev"
# the evaluation ring (default name: the training ring's + "-eval"): one consumer, the model's geometry
"$RINGCTL" create --ring "$TT_TAG-ev-eval" --frames 2 --height 32 --width 32 --text-len 77 --slots 16 --seed 7 --replace \
	>/dev/null 2>&1 || fail "ringctl create (eval)"
TT_RINGS+=("$TT_TAG-ev-eval")
args=(--ring "$TT_TAG-ev" --model tiny --vis-layers 1 --txt-layers 1 --threads 1 --dataset-size 32 --batch-size 8)
"$TRAINER" "${args[@]}" --steps 2 --eval-manifest "$TT_DIR/ho/manifest" --eval-ring "$TT_TAG-none" \
	--run-dir "$TT_DIR/noring" 2>"$TT_DIR/errn" && fail "a missing evaluation ring was accepted"
[ "$(wc -l <"$TT_DIR/errn")" = 1 ] && grep -q "loaderd --eval" "$TT_DIR/errn" || fail "unclear refusal: $(cat "$TT_DIR/errn")"
loaderd/loaderd --ring "$TT_TAG-ev-eval" --manifest "$TT_DIR/ho/manifest" --eval 2>"$TT_DIR/loaderd.log" &
TT_PIDS+=($!)
"$TRAINER" "${args[@]}" --steps 4 --eval-manifest "$TT_DIR/ho/manifest" --eval-every 2 --run-dir "$TT_DIR/run" \
	2>"$TT_DIR/log" || fail "trainer exited $?: $(tail -n 3 "$TT_DIR/log")"
[ "$(sed -n 's/.*"step":\([0-9]*\),.*/\1/p' "$TT_DIR/run/eval.jsonl" | tr '\n' ' ')" = "2 4 " ] ||
	fail "eval.jsonl should hold steps 2 and 4: $(cat "$TT_DIR/run/eval.jsonl")"
grep -q '"t2v_r1":' "$TT_DIR/run/eval.jsonl" || fail "eval.jsonl has no text->video R@1"
grep -q '"match":"instance"' "$TT_DIR/run/eval.jsonl" || fail "default hits should be instances"
# --eval-match caption: any sample with the query's caption is a hit
"$TRAINER" "${args[@]}" --steps 2 --eval-manifest "$TT_DIR/ho/manifest" --eval-match caption --run-dir "$TT_DIR/runc" \
	2>"$TT_DIR/logc" || fail "trainer --eval-match caption exited $?: $(tail -n 3 "$TT_DIR/logc")"
grep -q '"match":"caption"' "$TT_DIR/runc/eval.jsonl" || fail "--eval-match caption not used: $(cat "$TT_DIR/runc/eval.jsonl")"
"$TRAINER" "${args[@]}" --steps 2 --eval-match sample --run-dir "$TT_DIR/runx" 2>"$TT_DIR/errx" && fail "--eval-match sample accepted"
[ "$(wc -l <"$TT_DIR/errx")" = 1 ] && grep -q "eval-match" "$TT_DIR/errx" || fail "unclear refusal: $(cat "$TT_DIR/errx")"
grep "eval at step 4" "$TT_DIR/log" | sed 's/.*info: /  /'
# a model whose text context is shorter than the manifest's captions cannot read it
"$RINGCTL" create --ring "$TT_TAG-ev8" --frames 2 --height 32 --width 32 --text-len 8 --slots 32 --replace \
	>/dev/null 2>&1 || fail "ringctl create"
TT_RINGS+=("$TT_TAG-ev8")
"$TRAINER" "${args[@]}" --ring "$TT_TAG-ev8" --ctx-len 8 --steps 1 --eval-manifest "$TT_DIR/ho/manifest" \
	--run-dir "$TT_DIR/bad" 2>"$TT_DIR/err" && fail "a manifest the model cannot read was accepted"
[ "$(wc -l <"$TT_DIR/err")" = 1 ] && grep -q "eval-manifest" "$TT_DIR/err" || fail "unclear refusal: $(cat "$TT_DIR/err")"
echo "evaluations at steps 2 and 4 in eval.jsonl; refused: $(sed 's/.*fatal: //' "$TT_DIR/err")"
