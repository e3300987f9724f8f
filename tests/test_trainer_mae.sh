#!/usr/bin/env bash
# --objective mae through a ring: the reconstruction loss in metrics.jsonl (no contrastive columns),
# a resume bit-identical to the straight run (12 steps == 6 + resume + 6: byte-equal checkpoints),
# --grad-checkpoint the same bits, the checkpoint marked as an mae one, two ranks of batch 4 as one
# of batch 8; and the refusals, each one
# clear line: --eval-manifest, --init-from, a mask ratio that masks nothing, a clip resume of an mae
# checkpoint and an mae resume with another decoder.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
# the small model of the trainer tests: 2 frames of 16x16 (one slice of 4 tubelets of 2x8x8; 0.75
# masks 3, the encoder sees 1 and the class token), a 16-wide decoder of one block
MAE=(--objective mae --frames 2 --mask-ratio 0.75 --mae-decoder-width 16 --mae-decoder-layers 1
	--mae-decoder-heads 2)
run() { # run NAME RUNDIR FIRST_POSITION [flags...]: one trainer on a fresh ring
	local ring=$TT_TAG-$1 dir=$2 first=$3
	shift 3
	tt_ring "$ring" 1 11 "$first"
	tt_feeder "$ring" --error-every 7
	"$TRAINER" --ring "$ring" "${TT_MODEL[@]}" "${MAE[@]}" --batch-size 4 --steps 12 --warmup-steps 2 \
		--run-dir "$dir" "$@" 2>>"$TT_DIR/trainer.log" ||
		fail "trainer run $ring exited $? (log: $(tail -n 3 "$TT_DIR/trainer.log"))"
}
run a "$TT_DIR/straight" 0
m=$TT_DIR/straight/metrics.jsonl
[ "$(wc -l <"$m")" = 12 ] || fail "metrics.jsonl has $(wc -l <"$m") lines, want 12"
grep -q '"nce":\|"tau":' "$m" && fail "mae metrics carry contrastive columns: $(head -1 "$m")"
tt_field "$m" loss | awk '!($1 > 0 && $1 < 10) { bad = 1 } END { exit bad }' || fail "losses: $(tt_field "$m" loss | tr '\n' ' ')"
grep -q "recon loss" "$TT_DIR/trainer.log" || fail "the log line does not say recon loss"
grep -q "the encoder sees 1 and the class token" "$TT_DIR/trainer.log" || fail "no token plan in the log"
# lr: --mae-base-lr x 4 / 256 without --lr
grep -q "lr 2.34e-06 (--mae-base-lr x global batch / 256)" "$TT_DIR/trainer.log" || fail "the lr rule: $(grep 'mae:' "$TT_DIR/trainer.log")"

run b "$TT_DIR/split" 0 --stop-after-steps 6
first=$("$TRAINER" query resume-position --run-dir "$TT_DIR/split") || fail "query resume-position failed"
run c "$TT_DIR/split" "$first" --resume
a=$TT_DIR/straight/ckpt/ckpt-00000012.safetensors
[ -f "$a" ] && [ -f "$TT_DIR/split/ckpt/ckpt-00000012.safetensors" ] || fail "missing final checkpoints"
cmp "$a" "$TT_DIR/split/ckpt/ckpt-00000012.safetensors" || fail "12 straight steps and 6 + resume + 6 differ"
cmp <(tt_field "$m" loss) <(tt_field "$TT_DIR/split/metrics.jsonl" loss) || fail "the per-step losses differ"
run d "$TT_DIR/ckpt" 0 --grad-checkpoint
cmp "$a" "$TT_DIR/ckpt/ckpt/ckpt-00000012.safetensors" || fail "--grad-checkpoint changed the bits"
grep -aq '"avclip.objective":"mae"' "$a" || fail "the checkpoint does not say it is an mae one"

# two ranks of batch 4 follow one rank of batch 8 (the same 8 positions a step, the gradients
# all-reduced in buckets from the groups backward finishes): losses equal but for summation order
tt_ring "$TT_TAG-one" 1 11
tt_feeder "$TT_TAG-one"
"$TRAINER" --ring "$TT_TAG-one" "${TT_MODEL[@]}" "${MAE[@]}" --batch-size 8 --steps 4 --lr 1e-3 --run-dir "$TT_DIR/one" \
	2>"$TT_DIR/one.log" || fail "one rank: $(tail -n 2 "$TT_DIR/one.log")"
tt_ring "$TT_TAG-two" 2 11
tt_feeder "$TT_TAG-two"
"$TRAINER" query comm-create --comm "$TT_TAG-c" --ranks 2 2>/dev/null || fail "comm-create"
TT_COMMS+=("$TT_TAG-c")
P=()
for r in 0 1; do
	"$TRAINER" --ring "$TT_TAG-two" --rank $r --ranks 2 --comm "$TT_TAG-c" "${TT_MODEL[@]}" "${MAE[@]}" --batch-size 4 \
		--steps 4 --lr 1e-3 --run-dir "$TT_DIR/two$r" 2>"$TT_DIR/two$r.log" &
	P+=($!)
done
wait "${P[@]}" || fail "two ranks: $(tail -n 2 "$TT_DIR/two0.log" "$TT_DIR/two1.log")"
paste <(tt_field "$TT_DIR/one/metrics.jsonl" loss) <(tt_field "$TT_DIR/two0/metrics.jsonl" loss) |
	awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-5 * $1 || NF != 2) bad = 1 } END { exit bad || NR != 4 }' ||
	fail "two ranks differ from one: $(tt_field "$TT_DIR/one/metrics.jsonl" loss | tr '\n' ' ') vs $(tt_field "$TT_DIR/two0/metrics.jsonl" loss | tr '\n' ' ')"

# the parameter counts of VideoMAE ViT-B: an 86 M encoder (the video tower's) and an 8 M decoder
q=$("$TRAINER" query params --model vit-b16 --objective mae) || fail "query params"
grep -q '"objective":"mae","params":94380672,"encoder":86395392,"decoder":7985280' <<<"$q" || fail "query params: $q"

# refusals
ring=$TT_TAG-r
tt_ring "$ring" 1
refused() { # refused WHAT PATTERN [flags...]
	local what=$1 pat=$2
	shift 2
	"$TRAINER" --ring "$ring" "${TT_MODEL[@]}" "$@" --batch-size 4 --steps 1 2>"$TT_DIR/e" && fail "$what accepted"
	grep -q -- "$pat" "$TT_DIR/e" || fail "$what: unclear refusal: $(tail -n 2 "$TT_DIR/e")"
	[ "$(grep -c FATAL "$TT_DIR/e")" -le 1 ] || fail "$what: more than one line"
}
refused "--eval-manifest" "does not take --eval-manifest" "${MAE[@]}" --eval-manifest /nonexistent --run-dir "$TT_DIR/x1"
refused "--init-from" "does not take --init-from" "${MAE[@]}" --init-from "$a" --run-dir "$TT_DIR/x2"
refused "a ratio masking nothing" "masks none" "${MAE[@]}" --mask-ratio 0.2 --run-dir "$TT_DIR/x3"
refused "a clip resume of an mae checkpoint" "was written by --objective mae" "${TT_DATA[@]}" --resume --run-dir "$TT_DIR/straight"
refused "another decoder" "written for the decoder \[dec16/1/2 mask0.75\]" "${MAE[@]}" --mae-decoder-width 32 --resume \
	--run-dir "$TT_DIR/straight"
echo "mae: 12 steps == 6 + resume + 6 == --grad-checkpoint, bit for bit; 2 ranks == 1; losses $(tt_field "$m" loss | head -1) .. $(tt_field "$m" loss | tail -1); refusals clear"
