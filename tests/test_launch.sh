#!/usr/bin/env bash
# launch.sh end to end on a tiny synthetic dataset: 2 trainer ranks and 2 loaders; a loader is
# SIGKILLed mid-run and restarted by the supervisor; --add-loaders and --remove-loaders change a
# running job and answer the shell that asked (also when the last loader is kept); --stop --wait
# stops it with a checkpoint and returns once it has ended; --resume continues to the end;
# afterwards no process of the job and no shared memory is left.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl
jt_tmp launch
tmp=$JT_TMP
run=$tmp/run-$$
JT_FAIL_LOGS="$run/logs/*.log"
lpid=""
cleanup() {
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	jt_cleanup
}
trap cleanup EXIT
steps_done() { [ -s "$run/metrics.jsonl" ] && [ "$(sed -n 's/.*"step":\([0-9]*\).*/\1/p' "$run/metrics.jsonl" | tail -n 1)" -ge "$1" ]; }
loaders() { ls "$run"/pids/loaderd-*.pid 2>/dev/null | wc -l; }

# controlling a job that does not run: one clear line, exit 1
err=$(tools/launch.sh --add-loaders 1 --run-dir "$tmp/none" 2>&1) && fail "--add-loaders on no job succeeded"
[ "$(wc -l <<<"$err")" = 1 ] && grep -q "no running job" <<<"$err" || fail "unclear refusal: $err"

jt_data "$tmp"
model=("${JT_MODEL[@]}" --threads 1 --steps 1000000 --ckpt-every 50)

tools/launch.sh 2 --manifest "$tmp/data/manifest" --run-dir "$run" --loaders-per-node 2 --seed 3 -- "${model[@]}" \
	>"$tmp/launch1.out" 2>&1 &
lpid=$!
waitfor 60 test -s "$run/metrics.jsonl" || fail "no training step within 60 s"
ring=$(jt_ring "$run")
[ -e "/dev/shm/$ring" ] || fail "ring $ring not in /dev/shm"
[ "$(loaders)" = 2 ] || fail "expected 2 loaders, have $(loaders)"

# a loader killed mid-run is restarted and costs nothing
victim=$(cat "$run/pids/loaderd-0.pid")
kill -KILL "$victim"
waitfor 10 grep -q "loader 0 (pid $victim) died" "$run/logs/launch.log" || fail "the supervisor did not notice the dead loader"
waitfor 10 bash -c "[ \"\$(cat $run/pids/loaderd-0.pid)\" != $victim ] && kill -0 \$(cat $run/pids/loaderd-0.pid)" || fail "loader 0 not restarted"

# scaling loaders of the running job
tools/launch.sh --add-loaders 1 --run-dir "$run" | grep -q "loaders now: 3" || fail "--add-loaders"
waitfor 10 bash -c "tools/ringstat --run-dir $run --json | grep -q '\"live_producers\":3'" || fail "ringstat does not show 3 producers"
tools/launch.sh --remove-loaders 1 --run-dir "$run" | grep -q "loaders now: 2" || fail "--remove-loaders"
out=$(tools/launch.sh --remove-loaders 5 --run-dir "$run")
grep -q "kept the last loader" <<<"$out" && grep -q "loaders now: 1" <<<"$out" || fail "--remove-loaders 5 said: $out"

# --stop --wait (SIGTERM to launch.sh): a final checkpoint, the summary, exit status 0, then nothing left
waitfor 120 steps_done 8 || fail "training stalled"
out=$(tools/launch.sh --stop --run-dir "$run" --wait) || fail "--stop --wait failed: $out"
kill -0 "$lpid" 2>/dev/null && fail "--stop --wait returned while the job runs"
grep -q "stopped at step [0-9]* of 1000000; checkpoint $run/ckpt/ckpt-" <<<"$out" || fail "--stop --wait printed no summary: $out"
grep -q "step [0-9]*/1000000 (epoch [0-9]*)  loss" "$tmp/launch1.out" || fail "no progress line with step/total and epoch"
wait "$lpid"
st=$?
lpid=""
[ $st = 0 ] || fail "launch exited $st after a clean --stop (want 0; a SIGTERM not from --stop keeps 143)"
grep -q "checkpoint" "$run"/logs/trainer-0.log || fail "no final checkpoint"
[ -e "/dev/shm/$ring" ] && fail "ring left in /dev/shm"
pgrep -f "$ring" >/dev/null && fail "processes of the job left: $(pgrep -af "$ring")"
stopped=$(sed -n 's/.*"step":\([0-9]*\).*/\1/p' "$run/metrics.jsonl" | tail -n 1)

# --resume continues from the final checkpoint to a new end
end=$((stopped + 30))
tools/launch.sh --resume "$run" -- --steps $end >"$tmp/launch2.out" 2>&1 || fail "resumed run failed: $(tail -n 5 "$tmp/launch2.out")"
last=$(sed -n 's/.*"step":\([0-9]*\).*/\1/p' "$run/metrics.jsonl" | tail -n 1)
[ "$last" = $end ] || fail "resumed run ended at step $last, not $end"
grep -q "resum" "$run/logs/trainer-0.log" || fail "the trainer did not say it resumed"
grep -q "all 2 trainer rank(s) finished" "$run/logs/launch.log" || fail "no clean finish"
[ -e "/dev/shm/$ring" ] && fail "ring left after the resumed run"
pgrep -f "$ring" >/dev/null && fail "processes left after the resumed run"
echo "ok: stopped at step $stopped, resumed to $end; loader restart, add and remove worked"
