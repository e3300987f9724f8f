#!/usr/bin/env bash
# --keep-best t2v_r1 keeps the checkpoint of the best held-out evaluation in RUN_DIR/ckpt/best,
# and --keep-last's rotation of RUN_DIR/ckpt never deletes it. With --lr 0 every evaluation scores
# the same, so the best is the first (ties keep the earlier one) while keep-last 1 rotates past
# it; a resumed run keeps it too; and in a run that learns, best/ holds the step of eval.jsonl's
# highest t2v_r1.
set -u
cd "$(dirname "$0")/.."
for p in tools/synth tools/prep tools/eval loaderd/loaderd; do
	[ -x $p ] || { echo "skip: $p not built (needs libav)"; exit 77; }
done
. tests/trainer_testlib.sh
tools/synth --out "$TT_DIR/src" --videos 1 --heldout 2 --minutes 0.25 --size 160x96 --fps 10 2>/dev/null || fail synth
tools/prep --annotations "$TT_DIR/src/heldout.csv" --video-root "$TT_DIR/src/videos" --out "$TT_DIR/ho" --chunk-sec 4 \
	--short-side 96 -j 2 2>/dev/null || fail prep
"$RINGCTL" create --ring "$TT_TAG-kb" --frames 2 --height 32 --width 32 --text-len 77 --slots 32 --seed 7 --replace \
	>/dev/null 2>&1 || fail "ringctl create"
TT_RINGS+=("$TT_TAG-kb")
tt_feeder "$TT_TAG-kb"
"$RINGCTL" create --ring "$TT_TAG-kb-eval" --frames 2 --height 32 --width 32 --text-len 77 --slots 16 --seed 7 --replace \
	>/dev/null 2>&1 || fail "ringctl create (eval)"
TT_RINGS+=("$TT_TAG-kb-eval")
loaderd/loaderd --ring "$TT_TAG-kb-eval" --manifest "$TT_DIR/ho/manifest" --eval 2>"$TT_DIR/loaderd.log" &
TT_PIDS+=($!)
args=(--ring "$TT_TAG-kb" --model tiny --vis-layers 1 --txt-layers 1 --threads 1 --dataset-size 32 --batch-size 8
	--eval-manifest "$TT_DIR/ho/manifest" --eval-every 2 --ckpt-every 1 --keep-last 1 --keep-best t2v_r1)
run=$TT_DIR/run
"$TRAINER" "${args[@]}" --lr 0 --steps 6 --run-dir "$run" 2>"$TT_DIR/log" ||
	fail "trainer exited $?: $(tail -n 3 "$TT_DIR/log")"
[ "$(sed -n 's/.*"t2v_r1":\([^,]*\),.*/\1/p' "$run/eval.jsonl" | sort -u | wc -l)" = 1 ] ||
	fail "with --lr 0 every evaluation should score the same: $(cat "$run/eval.jsonl")"
[ "$(cat "$run/ckpt/best/LATEST")" = ckpt-00000002.safetensors ] ||
	fail "best/LATEST should name step 2, the first of equal scores: $(cat "$run/ckpt/best/LATEST")"
[ -s "$run/ckpt/best/ckpt-00000002.safetensors" ] || fail "the best checkpoint file is gone: $(ls "$run/ckpt/best")"
[ "$(ls "$run/ckpt" | grep -c '^ckpt-.*\.safetensors$')" = 1 ] && [ -s "$run/ckpt/ckpt-00000006.safetensors" ] ||
	fail "--keep-last 1 should leave only step 6 in ckpt/: $(ls "$run/ckpt")"
grep -q '"metric":"t2v_r1".*"step":2,' "$run/ckpt/best/best.json" || fail "best.json: $(cat "$run/ckpt/best/best.json")"
grep -q "best t2v_r1 .* at step 2: .*/ckpt/best" "$TT_DIR/log" || fail "the end of the log does not name the best"
# tools/eval reads it as any checkpoint directory
tools/eval --manifest "$TT_DIR/ho/manifest" --ckpt "$run/ckpt/best" --json --quiet >"$TT_DIR/out.json" \
	2>"$TT_DIR/eval.log" || fail "eval --ckpt RUN/ckpt/best exited $?: $(cat "$TT_DIR/eval.log")"
grep -q '"step":2,' "$TT_DIR/out.json" || fail "eval did not read step 2: $(cat "$TT_DIR/out.json")"
# resumed: best.json's score stands, the equal scores of steps 8 and 10 do not replace it
"$TRAINER" "${args[@]}" --lr 0 --steps 10 --run-dir "$run" --resume 2>"$TT_DIR/log2" ||
	fail "resumed trainer exited $?: $(tail -n 3 "$TT_DIR/log2")"
[ "$(cat "$run/ckpt/best/LATEST")" = ckpt-00000002.safetensors ] && [ -s "$run/ckpt/best/ckpt-00000002.safetensors" ] ||
	fail "the resumed run replaced or lost the best: $(ls "$run/ckpt/best")"
[ "$(ls "$run/ckpt" | grep -c '^ckpt-.*\.safetensors$')" = 1 ] && [ -s "$run/ckpt/ckpt-00000010.safetensors" ] ||
	fail "after the resume ckpt/ should hold only step 10: $(ls "$run/ckpt")"
# a run that learns: best/ holds the first step with eval.jsonl's highest score, and nothing else
"$TRAINER" "${args[@]}" --lr 2e-3 --steps 8 --run-dir "$TT_DIR/learn" 2>"$TT_DIR/log3" ||
	fail "trainer exited $?: $(tail -n 3 "$TT_DIR/log3")"
want=$(sed -n 's/.*"step":\([0-9]*\),.*"t2v_r1":\([^,]*\),.*/\2 \1/p' "$TT_DIR/learn/eval.jsonl" |
	sort -s -k1,1gr | head -n 1 | cut -d' ' -f2)
[ "$(cat "$TT_DIR/learn/ckpt/best/LATEST")" = "$(printf 'ckpt-%08d.safetensors' "$want")" ] &&
	[ "$(ls "$TT_DIR/learn/ckpt/best" | grep -c '^ckpt-')" = 1 ] ||
	fail "best/ should hold step $want only: $(ls "$TT_DIR/learn/ckpt/best"); $(cat "$TT_DIR/learn/eval.jsonl")"
# without an evaluation there is nothing to keep the best of
"$TRAINER" --ring "$TT_TAG-kb" --model tiny --dataset-size 32 --steps 1 --keep-best t2v_r1 --run-dir "$TT_DIR/x" \
	2>"$TT_DIR/err" && fail "--keep-best without --eval-manifest was accepted"
grep -q "needs --eval-manifest" "$TT_DIR/err" || fail "unclear refusal: $(cat "$TT_DIR/err")"
echo "best of steps 2..10 kept at step 2 past keep-last 1 and a resume; learning run: best at step $want"
