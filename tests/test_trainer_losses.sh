#!/usr/bin/env bash
# Every loss trains through the trainer program on 4 rank processes (B = 4 each) fed through a
# ring: all ranks exit 0 after 60 steps and the batch InfoNCE of the last 10 steps is below that
# of the first 10 (issue 6: all five losses train across ranks; 1 and 2 ranks: test_trainer_ring).
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
tt_ring "$TT_TAG-four" 4
tt_feeder "$TT_TAG-four" --error-every 13
for loss in openclip fastclip-v0 fastclip-v1 fastclip-v2 fastclip-v3; do
	comm=$TT_TAG-$loss
	"$TRAINER" query comm-create --comm "$comm" --ranks 4 2>/dev/null || fail "query comm-create failed"
	TT_COMMS+=("$comm")
	pids=()
	for r in 0 1 2 3; do
		"$TRAINER" --ring "$TT_TAG-four" --rank $r --ranks 4 --comm "$comm" "${TT_MODEL[@]}" "${TT_DATA[@]}" --loss $loss \
			--batch-size 4 --steps 60 --lr 2e-3 --log-every 1000 --run-dir "$TT_DIR/$loss" 2>"$TT_DIR/$loss.$r.log" &
		pids+=($!)
	done
	for r in 0 1 2 3; do
		wait "${pids[$r]}" || fail "$loss rank $r exited $?: $(tail -n 2 "$TT_DIR/$loss.$r.log")"
	done
	m=$TT_DIR/$loss/metrics.jsonl
	[ "$(wc -l <"$m")" = 60 ] || fail "$loss: $(wc -l <"$m") metrics lines, want 60"
	first=$(tt_field "$m" nce | head -n 10 | awk '{s += $1} END {printf "%.4f", s / NR}')
	last=$(tt_field "$m" nce | tail -n 10 | awk '{s += $1} END {printf "%.4f", s / NR}')
	awk -v a="$first" -v b="$last" 'BEGIN {exit !(b < a)}' || fail "$loss: InfoNCE did not fall: $first -> $last"
	echo "  $loss on 4 ranks: InfoNCE first 10 steps $first -> last 10 $last"
done
echo "all five losses train on 4 rank processes"
