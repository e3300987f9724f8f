#!/usr/bin/env bash
# The trainer end to end through a real ring fed by the synthetic feeder (caption = colour
# class, error slots every 9th position): 1 rank, then 2 rank processes over a comm group.
# Each run exits 0, writes one metrics line per step with skipped error slots counted, and
# the batch InfoNCE of the last 10 steps is below 0.8x that of the first 10; with 2 ranks the
# bytes logged per step per collective equal the communication model.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
STEPS=100
check_learned() { # check_learned METRICS
	local m=$1 n first last
	n=$(wc -l <"$m")
	[ "$n" = "$STEPS" ] || fail "$m has $n lines, want $STEPS"
	first=$(tt_field "$m" nce | head -n 10 | awk '{s += $1} END {printf "%.4f", s / NR}')
	last=$(tt_field "$m" nce | tail -n 10 | awk '{s += $1} END {printf "%.4f", s / NR}')
	awk -v a="$first" -v b="$last" 'BEGIN {exit !(b < 0.8 * a)}' || fail "batch InfoNCE did not fall: first 10 steps $first, last 10 $last"
	errs=$(tt_field "$m" error_slots | awk '{s += $1} END {print s}')
	[ "$errs" -gt 0 ] || fail "no error slot was counted"
	echo "  InfoNCE first 10 steps $first -> last 10 $last; $errs error slots skipped"
}
common=("${TT_MODEL[@]}" "${TT_DATA[@]}" --loss fastclip-v3 --batch-size 8 --steps $STEPS --lr 2e-3 --log-every 20)

echo "1 rank:"
tt_ring "$TT_TAG-one" 1
tt_feeder "$TT_TAG-one" --error-every 9
# with --grad-checkpoint (the same gradients, so it learns the same) and a peak for the MFU column
"$TRAINER" --ring "$TT_TAG-one" "${common[@]}" --grad-checkpoint --peak-tflops 0.001 --run-dir "$TT_DIR/one" \
	2>"$TT_DIR/one.log" || fail "1-rank trainer exited $?: $(tail -n 3 "$TT_DIR/one.log")"
grep -q "finished $STEPS steps" "$TT_DIR/one.log" || fail "1-rank trainer did not report finishing"
check_learned "$TT_DIR/one/metrics.jsonl"
# progress: MFU, device memory and the data wait's share in every metrics line and the log
for k in mfu mem_bytes mem_peak_bytes; do
	bad=$(tt_field "$TT_DIR/one/metrics.jsonl" $k | awk '!($1 > 0)' | head -n 1)
	[ -z "$bad" ] && [ -n "$(tt_field "$TT_DIR/one/metrics.jsonl" $k)" ] || fail "metrics.jsonl: $k '$bad' is not positive"
done
[ -n "$(tt_field "$TT_DIR/one/metrics.jsonl" data_wait_pct)" ] || fail "metrics.jsonl has no data_wait_pct"
# the CPU backend has no slow paths (kern_ctx_slow_paths): 0 in every line
bad=$(tt_field "$TT_DIR/one/metrics.jsonl" slow_paths | awk '$1 != 0' | head -n 1)
[ -z "$bad" ] && [ -n "$(tt_field "$TT_DIR/one/metrics.jsonl" slow_paths)" ] || fail "metrics.jsonl: slow_paths '$bad' is not 0"
grep -qE 'data wait [0-9.]+ s, [0-9.]+%\) .* mem [0-9.]+ GiB \(peak [0-9.]+\) MFU [0-9.]+%' "$TT_DIR/one.log" ||
	fail "the step line lacks the data wait %, memory or MFU: $(grep -m1 'step 20/' "$TT_DIR/one.log")"
grep -q 'device memory of batch 8 (--grad-checkpoint): parameters' "$TT_DIR/one.log" || fail "no memory report at start"

echo "2 ranks:"
tt_ring "$TT_TAG-two" 2
tt_feeder "$TT_TAG-two" --error-every 9
"$TRAINER" query comm-create --comm "$TT_TAG-comm" --ranks 2 2>/dev/null || fail "query comm-create failed"
TT_COMMS+=("$TT_TAG-comm")
pids=()
for r in 0 1; do
	"$TRAINER" --ring "$TT_TAG-two" --rank $r --ranks 2 --comm "$TT_TAG-comm" "${common[@]}" --run-dir "$TT_DIR/two" \
		2>"$TT_DIR/two.$r.log" &
	pids+=($!)
done
for r in 0 1; do
	wait "${pids[$r]}" || fail "rank $r exited $?: $(tail -n 3 "$TT_DIR/two.$r.log")"
	grep -q "finished $STEPS steps" "$TT_DIR/two.$r.log" || fail "rank $r did not report finishing"
done
# bytes per step = DESIGN §7's model for K=2, B=8, d=16, FastCLIP pack width 2, P parameters:
# all-gather features 2(K-1)Bd*4 + ids (K-1)B*8 + packs (K-1)B*2*4; all-reduce 2(K-1)/K*P*4
P=$(sed -n 's/.*model tiny: \([0-9]*\) parameters.*/\1/p' "$TT_DIR/two.0.log")
[ -n "$P" ] || fail "rank 0 did not log its parameter count"
for f in "allgather_bytes 1152" "allreduce_bytes $((4 * P))" "reduce_scatter_bytes 0"; do
	set -- $f
	bad=$(tt_field "$TT_DIR/two/metrics.jsonl" "$1" | grep -v -x "$2" | head -n 1)
	[ -z "$bad" ] || fail "$1 per step is $bad, the communication model says $2"
done
echo "  bytes per step match the model: all-gather 1152, all-reduce $((4 * P))"
check_learned "$TT_DIR/two/metrics.jsonl"
echo "1 and 2 ranks learn the feeder's pairs through the ring"
