#!/usr/bin/env bash
# Count the waits (issue 10): every loss on 1 and 2 ranks through the trainer program, and no step
# may have more host waits on the device (kern_ctx_host_waits, the "host_waits" of metrics.jsonl)
# than one upload of the batch, the feature/u exchange (FastCLIP: features and u packs; OpenCLIP:
# features and the reduce-scatter of their gradients) and, on a step that ends a --metrics-every
# interval (or the run), the one read-back of the logged scalars. On the CPU backend events are
# complete when recorded, so the upload and the exchange never block: there the count must be
# exactly 0, and 1 on a read-back step, so any new sync point in the step shows. Also a
# --precision bf16 run.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
STEPS=7 EVERY=3
UPLOAD=1 EXCHANGE=2 READBACK=1
# run NAME RANKS LOSS [flags...]: one run of STEPS steps, each rank on the ring NAME
run() {
	local name=$1 ranks=$2 loss=$3
	shift 3
	tt_ring "$TT_TAG-$name" "$ranks"
	tt_feeder "$TT_TAG-$name"
	local comm=() pids=()
	if [ "$ranks" -gt 1 ]; then
		"$TRAINER" query comm-create --comm "$TT_TAG-$name-c" --ranks "$ranks" 2>/dev/null || fail "query comm-create failed"
		TT_COMMS+=("$TT_TAG-$name-c")
		comm=(--comm "$TT_TAG-$name-c")
	fi
	for ((r = 0; r < ranks; r++)); do
		"$TRAINER" --ring "$TT_TAG-$name" --rank $r --ranks "$ranks" "${comm[@]}" "${TT_MODEL[@]}" "${TT_DATA[@]}" \
			--loss "$loss" --batch-size 4 --steps $STEPS --metrics-every $EVERY --run-dir "$TT_DIR/$name" "$@" \
			2>"$TT_DIR/$name.$r.log" &
		pids+=($!)
	done
	for ((r = 0; r < ranks; r++)); do
		wait "${pids[$r]}" || fail "$name rank $r exited $?: $(tail -n 2 "$TT_DIR/$name.$r.log")"
	done
	local m=$TT_DIR/$name/metrics.jsonl
	[ "$(wc -l <"$m")" = $STEPS ] || fail "$name: $(wc -l <"$m") metrics lines, want $STEPS"
	local waits
	waits=$(paste -d' ' <(tt_field "$m" step) <(tt_field "$m" host_waits))
	[ "$(wc -l <<<"$waits")" = $STEPS ] || fail "$name: a metrics line lacks host_waits"
	while read -r step w; do
		local budget=$((UPLOAD + EXCHANGE)) cpu=0
		if [ $((step % EVERY)) = 0 ] || [ "$step" = $STEPS ]; then
			budget=$((budget + READBACK))
			cpu=$READBACK
		fi
		[ "$w" -le $budget ] || fail "$name: step $step waited $w times on the device, the budget is $budget"
		[ "$w" = $cpu ] || fail "$name: step $step waited $w times on the CPU backend, where only read-backs wait ($cpu)"
	done <<<"$waits"
	echo "  $name: host waits per step $(cut -d' ' -f2 <<<"$waits" | tr '\n' ' ')(read-backs every $EVERY steps)"
}
for loss in openclip fastclip-v0 fastclip-v1 fastclip-v2 fastclip-v3; do
	run "$loss-1" 1 "$loss"
	run "$loss-2" 2 "$loss"
done
run bf16 2 fastclip-v3 --precision bf16
grep -q "precision bf16 (--precision)" "$TT_DIR/bf16.0.log" || fail "the bf16 run does not say its precision"
grep -q "precision fp32 (auto: cpu backend)" "$TT_DIR/openclip-1.0.log" || fail "the default precision is not said"
tt_field "$TT_DIR/bf16/metrics.jsonl" loss | awk '$1 == "null" {exit 1}' || fail "the bf16 run has a non-finite loss"
echo "every loss on 1 and 2 ranks (and bf16) within the host-wait budget"
