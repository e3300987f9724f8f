#!/usr/bin/env bash
# Resume is bit-identical: N steps straight and N/2 steps + --resume + N/2 steps (each run on a
# freshly created ring fed by the deterministic feeder, with error slots; the resumed run's ring
# starts at trainer query resume-position) end in byte-equal checkpoints: weights, optimizer, τ
# state, u tables and stream positions. So does the straight run with 3 kernel threads instead of 1.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
run() { # run NAME RUNDIR FIRST_POSITION [flags...]: one trainer on a fresh ring
	local ring=$TT_TAG-$1 dir=$2 first=$3
	shift 3
	tt_ring "$ring" 1 11 "$first"
	tt_feeder "$ring" --error-every 7
	"$TRAINER" --ring "$ring" "${TT_MODEL[@]}" "${TT_DATA[@]}" --loss fastclip-v3 --batch-size 8 --steps 12 \
		--lr 2e-3 --lr-tau 0.01 --gamma-decay-epochs 2 --run-dir "$dir" "$@" 2>>"$TT_DIR/trainer.log" ||
		fail "trainer run $ring exited $? (log: $(tail -n 3 "$TT_DIR/trainer.log"))"
}
run a "$TT_DIR/straight" 0
run b "$TT_DIR/split" 0 --stop-after-steps 6
[ -f "$TT_DIR/split/ckpt/ckpt-00000006.safetensors" ] || fail "no checkpoint at step 6"
first=$("$TRAINER" query resume-position --run-dir "$TT_DIR/split") || fail "query resume-position failed"
[ "$first" -gt 0 ] || fail "query resume-position printed '$first'"
run c "$TT_DIR/split" "$first" --resume
grep -q "resumed from .* at step 6" "$TT_DIR/trainer.log" || fail "the third run did not resume at step 6"
a=$TT_DIR/straight/ckpt/ckpt-00000012.safetensors
b=$TT_DIR/split/ckpt/ckpt-00000012.safetensors
[ -f "$a" ] && [ -f "$b" ] || fail "missing final checkpoints"
cmp "$a" "$b" || fail "12 straight steps and 6 + resume + 6 differ"
run d "$TT_DIR/threads" 0 --threads 3
cmp "$a" "$TT_DIR/threads/ckpt/ckpt-00000012.safetensors" || fail "1 and 3 kernel threads give different checkpoints"
[ "$(wc -l <"$TT_DIR/split/metrics.jsonl")" = 12 ] || fail "metrics of the split run should have 12 lines"
cmp <(tt_field "$TT_DIR/straight/metrics.jsonl" loss) <(tt_field "$TT_DIR/split/metrics.jsonl" loss) ||
	fail "the per-step losses differ"
echo "12 steps (epochs 0-2) == 6 + resume + 6 == 12 on 3 threads: byte-equal checkpoints ($(stat -c %s "$a") bytes) and losses"
