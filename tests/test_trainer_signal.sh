#!/usr/bin/env bash
# SIGTERM to ONE of two ranks stops both at the same step boundary: both exit 0, rank 0 writes
# a checkpoint at that step with both positions, and a resumed run continues to --steps.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
tt_ring "$TT_TAG-sig" 2
tt_feeder "$TT_TAG-sig" --error-every 5
"$TRAINER" query comm-create --comm "$TT_TAG-comm" --ranks 2 2>/dev/null || fail "query comm-create failed"
TT_COMMS+=("$TT_TAG-comm")
common=("${TT_MODEL[@]}" "${TT_DATA[@]}" --loss fastclip-v2 --batch-size 4 --lr 1e-3 --log-every 1000
	--ring "$TT_TAG-sig" --ranks 2 --comm "$TT_TAG-comm" --run-dir "$TT_DIR/run")
start() {
	pids=()
	for r in 0 1; do
		"$TRAINER" --rank $r "${common[@]}" "$@" 2>>"$TT_DIR/r$r.log" &
		pids+=($!)
		TT_PIDS+=($!)
	done
}
start --steps 1000000
for i in $(seq 1 200); do # until a few steps are done
	[ "$(cat "$TT_DIR/run/metrics.jsonl" 2>/dev/null | wc -l)" -ge 5 ] && break
	sleep 0.05
done
kill -TERM "${pids[1]}"
for r in 0 1; do
	wait "${pids[$r]}" || fail "rank $r exited $? after SIGTERM: $(tail -n 3 "$TT_DIR/r$r.log")"
	grep -q "stopped by a signal at step" "$TT_DIR/r$r.log" || fail "rank $r did not stop at a step boundary"
done
s0=$(sed -n 's/.*stopped by a signal at step \([0-9]*\).*/\1/p' "$TT_DIR/r0.log")
s1=$(sed -n 's/.*stopped by a signal at step \([0-9]*\).*/\1/p' "$TT_DIR/r1.log")
[ "$s0" = "$s1" ] || fail "ranks stopped at different steps: $s0 and $s1"
latest=$(cat "$TT_DIR/run/ckpt/LATEST")
[ "$latest" = "$(printf 'ckpt-%08d.safetensors' "$s0")" ] || fail "LATEST is $latest, the stop was at step $s0"
[ "$(wc -l <"$TT_DIR/run/metrics.jsonl")" = "$s0" ] || fail "metrics lines differ from the stop step $s0"
want=$((s0 + 3))
# a comm group keeps the previous run's "left" marks: a new run needs a fresh one (launch.sh too)
"$TRAINER" query comm-create --comm "$TT_TAG-comm" --ranks 2 2>/dev/null || fail "query comm-create failed"
start --steps $want --resume
for r in 0 1; do
	wait "${pids[$r]}" || fail "resumed rank $r exited $?: $(tail -n 3 "$TT_DIR/r$r.log")"
done
grep -q "finished $want steps (3 this run)" "$TT_DIR/r0.log" || fail "the resumed run did not finish 3 more steps"
echo "SIGTERM to rank 1 stopped both ranks at step $s0 with a checkpoint; resume ran to step $want"
