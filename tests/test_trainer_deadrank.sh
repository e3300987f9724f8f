#!/usr/bin/env bash
# A rank killed with SIGKILL mid-run does not hang the others: rank 0 exits 1 within seconds
# with a last line naming the dead rank (what launch.sh shows the user).
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
tt_ring "$TT_TAG-dead" 2
tt_feeder "$TT_TAG-dead"
"$TRAINER" query comm-create --comm "$TT_TAG-comm" --ranks 2 2>/dev/null || fail "query comm-create failed"
TT_COMMS+=("$TT_TAG-comm")
pids=()
for r in 0 1; do
	"$TRAINER" --rank $r --ring "$TT_TAG-dead" --ranks 2 --comm "$TT_TAG-comm" "${TT_MODEL[@]}" "${TT_DATA[@]}" \
		--batch-size 4 --steps 1000000 --log-every 1000 --run-dir "$TT_DIR/run" 2>"$TT_DIR/r$r.log" &
	pids+=($!)
	TT_PIDS+=($!)
done
for i in $(seq 1 200); do
	[ "$(cat "$TT_DIR/run/metrics.jsonl" 2>/dev/null | wc -l)" -ge 3 ] && break
	sleep 0.05
done
kill -KILL "${pids[1]}"
t0=$(date +%s.%N)
wait "${pids[0]}"
rc=$?
secs=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')
[ $rc = 1 ] || fail "rank 0 exited $rc after its peer died, want 1"
last=$(tail -n 1 "$TT_DIR/r0.log")
grep -q "rank 1" <<<"$last" || fail "rank 0's last line does not name rank 1: $last"
awk -v s="$secs" 'BEGIN {exit !(s < 10)}' || fail "rank 0 took $secs s to notice"
echo "rank 0 exited 1 after ${secs}s: ${last#*fatal: }"
