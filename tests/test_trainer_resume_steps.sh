#!/usr/bin/env bash
# --steps raised on resume continues the LR schedule by its stated rule: a run of 8 steps resumed
# at its end with --steps 28 says what the LR will do ("plan: --steps changed from 8 to 28") and
# its LR joins the 28-step cosine linearly from the checkpoint's (over a tenth of the 20 steps left:
# two) instead of jumping from ~0 back up; a resume with the same --steps keeps the schedule.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
run() { # run NAME [flags...]
	local ring=$TT_TAG-$1 first
	shift
	first=$("$TRAINER" query resume-position --run-dir "$TT_DIR/run") || fail "query resume-position"
	tt_ring "$ring" 1 11 "$first"
	tt_feeder "$ring"
	"$TRAINER" --ring "$ring" "${TT_MODEL[@]}" "${TT_DATA[@]}" --loss fastclip-v3 --batch-size 4 --lr 1e-3 \
		--run-dir "$TT_DIR/run" "$@" >"$TT_DIR/$ring.log" 2>&1 || fail "run $1: $(tail -n 3 "$TT_DIR/$ring.log")"
}
run a --steps 8
run b --steps 28 --stop-after-steps 4 --resume
grep -q "plan: --steps changed from 8 to 28 at step 8: the cosine is now the one of a 28-step run" "$TT_DIR/$TT_TAG-b.log" ||
	fail "the rule is not stated: $(grep plan "$TT_DIR/$TT_TAG-b.log")"
mapfile -t lr < <(tt_field "$TT_DIR/run/metrics.jsonl" lr)
[ ${#lr[@]} = 12 ] || fail "expected 12 metrics lines, got ${#lr[@]}"
# the join: 2 steps (a tenth of the 20 left) from the old run's last LR (step 8's, near lr-min 0)
# to the 28-step cosine (update k of 28: 1e-3 * (1 + cos(pi * k/28)) / 2), then on it
c8=$(awk 'BEGIN { printf "%.9e", 1e-3 * (1 + cos(3.14159265358979 * 8 / 28)) / 2 }')
c9=$(awk 'BEGIN { printf "%.9e", 1e-3 * (1 + cos(3.14159265358979 * 9 / 28)) / 2 }')
close() { awk -v g="$1" -v w="$2" 'BEGIN { exit !(g > 0.999 * w && g < 1.001 * w) }'; }
close "${lr[8]}" "$(awk -v f="${lr[7]}" -v c="$c8" 'BEGIN { printf "%.9e", f + (c - f) / 2 }')" ||
	fail "first resumed LR ${lr[8]}: not halfway from ${lr[7]} to the 28-step cosine's $c8"
close "${lr[9]}" "$c9" || fail "second resumed LR ${lr[9]}: not on the 28-step cosine ($c9)"
awk -v a="${lr[9]}" -v b="${lr[10]}" -v c="${lr[11]}" 'BEGIN { exit !(b < a && c < b) }' ||
	fail "the LR does not follow the decreasing cosine after the join: ${lr[*]:8}"
# the schedule is kept by a resume with the same --steps: that run does not restate a change
run c --steps 28 --stop-after-steps 6 --resume
grep -q "plan: --steps changed" "$TT_DIR/$TT_TAG-c.log" && fail "a resume with the same --steps changed the schedule"
mapfile -t lr2 < <(tt_field "$TT_DIR/run/metrics.jsonl" lr)
awk -v a="${lr2[11]}" -v b="${lr2[12]}" 'BEGIN { exit !(b < a) }' || fail "the LR after the second resume: ${lr2[*]:11}"
echo "ok: a raised --steps joins the new cosine by the stated rule (LR ${lr[7]} -> ${lr[8]} ${lr[9]} ...)"
