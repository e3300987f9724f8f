#!/usr/bin/env bash
# A stop request that finds the ranks waiting for data that will not come (the loaders stopped
# first, as with a terminal's Ctrl-C or systemd stopping every unit at once): both ranks give up
# the batch within a second, exit 0, and rank 0 checkpoints the last step trained with the
# positions before the abandoned batch, so a resume on a recreated ring continues from there.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
ring=$TT_TAG-nodata
tt_ring "$ring" 2
# 4 batches of 2 ranks x 4 clips, then nothing: the ranks stop in the middle of step 5's wait
tt_feeder "$ring" --stop-after 36
"$TRAINER" query comm-create --comm "$TT_TAG-comm" --ranks 2 2>/dev/null || fail "query comm-create failed"
TT_COMMS+=("$TT_TAG-comm")
common=("${TT_MODEL[@]}" "${TT_DATA[@]}" --loss fastclip-v1 --batch-size 4 --log-every 1000 --ckpt-every 0
	--ring "$ring" --ranks 2 --comm "$TT_TAG-comm" --run-dir "$TT_DIR/run" --data-timeout 60)
pids=()
for r in 0 1; do
	"$TRAINER" --rank $r "${common[@]}" --steps 1000 2>>"$TT_DIR/r$r.log" &
	pids+=($!)
	TT_PIDS+=($!)
done
for _ in $(seq 1 100); do # until the data has run out (4 steps done, both ranks waiting)
	[ "$(cat "$TT_DIR/run/metrics.jsonl" 2>/dev/null | wc -l)" -ge 4 ] && break
	sleep 0.1
done
sleep 0.5
[ "$(wc -l <"$TT_DIR/run/metrics.jsonl")" = 4 ] || fail "expected 4 steps before the data ran out"
t0=$(date +%s.%N)
kill -TERM "${pids[@]}"
for r in 0 1; do
	wait "${pids[$r]}" || fail "rank $r exited $? after SIGTERM while waiting: $(tail -n 3 "$TT_DIR/r$r.log")"
done
secs=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN{print e-s}')
awk -v t="$secs" 'BEGIN{exit !(t < 5)}' || fail "the stop took $secs s (a wait for data should end within a second)"
grep -q "batch is abandoned" "$TT_DIR/r0.log" || fail "rank 0 did not say it abandoned the batch"
[ "$(cat "$TT_DIR/run/ckpt/LATEST")" = ckpt-00000004.safetensors ] || fail "LATEST is $(cat "$TT_DIR/run/ckpt/LATEST"), want step 4"
first=$("$TRAINER" query resume-position --run-dir "$TT_DIR/run") || fail "query resume-position"
[ "$first" = 32 ] || fail "the checkpoint's stream position is $first, want 32 (the abandoned batch is read again)"

# resume on a ring recreated at that position: the run continues from step 4
tt_ring "$ring" 2 7 "$first"
tt_feeder "$ring"
"$TRAINER" query comm-create --comm "$TT_TAG-comm" --ranks 2 2>/dev/null || fail "query comm-create failed"
pids=()
for r in 0 1; do
	"$TRAINER" --rank $r "${common[@]}" --steps 7 --resume 2>>"$TT_DIR/r$r.log" &
	pids+=($!)
	TT_PIDS+=($!)
done
for r in 0 1; do
	wait "${pids[$r]}" || fail "resumed rank $r exited $?: $(tail -n 3 "$TT_DIR/r$r.log")"
done
grep -q "finished 7 steps (3 this run)" "$TT_DIR/r0.log" || fail "the resumed run did not finish 3 more steps"
echo "a stop while waiting for data ended in $secs s with the checkpoint of step 4; resumed to step 7"
