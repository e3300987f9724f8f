#!/usr/bin/env bash
# A checkpoint is reported saved only when it was: the final save after SIGTERM fails (its
# folder replaced by a file meanwhile), so the trainer says it was NOT saved, names the failure
# and exits 1; LATEST and the previous checkpoint are not touched.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
tt_ring "$TT_TAG-ck" 1
tt_feeder "$TT_TAG-ck"
"$TRAINER" "${TT_MODEL[@]}" "${TT_DATA[@]}" --batch-size 4 --steps 1000000 --ckpt-every 0 --log-every 1000 \
	--ring "$TT_TAG-ck" --run-dir "$TT_DIR/run" 2>"$TT_DIR/log" &
pid=$!
TT_PIDS+=($pid)
for i in $(seq 1 400); do
	[ "$(cat "$TT_DIR/run/metrics.jsonl" 2>/dev/null | wc -l)" -ge 3 ] && break
	sleep 0.05
done
[ "$(wc -l <"$TT_DIR/run/metrics.jsonl")" -ge 3 ] || fail "no steps: $(tail -n 3 "$TT_DIR/log")"
rm -rf "$TT_DIR/run/ckpt" && touch "$TT_DIR/run/ckpt" # the save cannot create its file now
kill -TERM $pid
wait $pid
rc=$?
cat "$TT_DIR/log"
[ $rc = 1 ] || fail "trainer exited $rc after a failed final checkpoint, want 1"
grep -q "checkpoint at step [0-9]* failed" "$TT_DIR/log" || fail "the failed save is not reported"
grep -q "checkpoint saved" "$TT_DIR/log" && fail "the log says the checkpoint was saved"
grep -q "stopped by a signal at step [0-9]*; the checkpoint of this step was NOT saved" "$TT_DIR/log" ||
	fail "the stop line does not say the checkpoint is missing"
echo "a failed final checkpoint is reported as failed, never as saved"
