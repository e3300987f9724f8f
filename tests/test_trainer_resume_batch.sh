#!/usr/bin/env bash
# A resume with another --batch-size is refused, naming the checkpoint's batch and what to do
# (the epoch and γ schedules count its steps: today's recomputation as if the whole run had used
# the new batch is gone); query check-start refuses it too, and the checkpoint's batch resumes.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
run() { # run NAME [flags...]: one trainer on a fresh ring starting where the run directory says
	local ring=$TT_TAG-$1 first
	shift
	first=$("$TRAINER" query resume-position --run-dir "$TT_DIR/run") || fail "query resume-position"
	tt_ring "$ring" 1 11 "$first"
	tt_feeder "$ring"
	"$TRAINER" --ring "$ring" "${TT_MODEL[@]}" "${TT_DATA[@]}" --loss fastclip-v3 --steps 8 --run-dir "$TT_DIR/run" "$@" \
		>"$TT_DIR/$ring.log" 2>&1
}
run a --batch-size 4 --stop-after-steps 4 || fail "first run: $(tail -n 3 "$TT_DIR/$TT_TAG-a.log")"
run b --batch-size 8 --resume && fail "a resume with --batch-size 8 of a --batch-size 4 run was accepted"
grep -q "cannot resume with --batch-size 8: the checkpoint of step 4 .* was trained with --batch-size 4" "$TT_DIR/$TT_TAG-b.log" ||
	fail "unclear refusal: $(tail -n 2 "$TT_DIR/$TT_TAG-b.log")"
grep -q "resume with --batch-size 4" "$TT_DIR/$TT_TAG-b.log" || fail "the refusal does not say what to do"
out=$("$TRAINER" query check-start "${TT_MODEL[@]}" "${TT_DATA[@]}" --batch-size 8 --steps 8 --resume --run-dir "$TT_DIR/run" 2>&1) &&
	fail "query check-start accepted the other batch: $out"
grep -q "cannot resume with --batch-size 8" <<<"$out" || fail "query check-start: $out"
run c --batch-size 4 --resume || fail "the resume with the checkpoint's batch: $(tail -n 3 "$TT_DIR/$TT_TAG-c.log")"
grep -q "resumed from .* at step 4" "$TT_DIR/$TT_TAG-c.log" || fail "did not resume at step 4"
echo "ok: another --batch-size on resume is refused with the checkpoint's"
