#!/usr/bin/env bash
# launch.sh end to end on a tiny synthetic dataset: 2 trainer ranks and 2 loaders; a loader is
# SIGKILLed mid-run and restarted by the supervisor; --add-loaders and --remove-loaders change a
# running job and answer the shell that asked (also when the last loader is kept); --stop --wait
# stops it with a checkpoint and returns once it has ended; --resume continues to the end;
# afterwards no process of the job and no shared memory is left.
set -u
BUILD=${BUILD:-build}
for b in tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl; do
	[ -x "$b" ] || { echo "skip: $b is not built"; exit 77; }
done
tmp=$(mktemp -d /tmp/avclip-launch-test.XXXXXX)
run=$tmp/run-$$
lpid=""
cleanup() {
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	tail -n 30 "$run"/logs/*.log 2>/dev/null
	exit 1
}
waitfor() { # waitfor SECONDS COMMAND...: until the command succeeds
	local t=$1
	shift
	for _ in $(seq $((t * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}
steps_done() { [ -s "$run/metrics.jsonl" ] && [ "$(sed -n 's/.*"step":\([0-9]*\).*/\1/p' "$run/metrics.jsonl" | tail -n 1)" -ge "$1" ]; }
loaders() { ls "$run"/pids/loaderd-*.pid 2>/dev/null | wc -l; }

# controlling a job that does not run: one clear line, exit 1
err=$(tools/launch.sh --add-loaders 1 --run-dir "$tmp/none" 2>&1) && fail "--add-loaders on no job succeeded"
[ "$(wc -l <<<"$err")" = 1 ] && grep -q "no running job" <<<"$err" || fail "unclear refusal: $err"

tools/synth --out "$tmp/src" --videos 2 --heldout 1 --minutes 0.5 --size 96x64 --seed 5 >/dev/null 2>&1 || fail "synth"
tools/prep --annotations "$tmp/src/train.csv" --video-root "$tmp/src/videos" --out "$tmp/data" --short-side 64 \
	--chunk-sec 10 --train-bpe 600 >/dev/null 2>&1 || fail "prep"
model=(--model tiny --image-size 16 --patch 8 --frames 2 --vis-width 32 --vis-layers 1 --vis-heads 2
	--txt-width 32 --txt-layers 1 --txt-heads 2 --embed-dim 16 --threads 1 --batch-size 4 --steps 1000000 --ckpt-every 50)

tools/launch.sh 2 --manifest "$tmp/data/manifest" --run-dir "$run" --loaders-per-node 2 --seed 3 -- "${model[@]}" \
	>"$tmp/launch1.out" 2>&1 &
lpid=$!
waitfor 60 test -s "$run/metrics.jsonl" || fail "no training step within 60 s"
ring=$(sed -n "s/^.*RING=\([^ ]*\).*/\1/p" "$run/launch.conf")
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

# --stop --wait (SIGTERM to launch.sh): a final checkpoint, the summary, then nothing left
waitfor 120 steps_done 8 || fail "training stalled"
out=$(tools/launch.sh --stop --run-dir "$run" --wait) || fail "--stop --wait failed: $out"
kill -0 "$lpid" 2>/dev/null && fail "--stop --wait returned while the job runs"
grep -q "stopped at step [0-9]* of 1000000; checkpoint $run/ckpt/ckpt-" <<<"$out" || fail "--stop --wait printed no summary: $out"
grep -q "step [0-9]*/1000000 (epoch [0-9]*)  loss" "$tmp/launch1.out" || fail "no progress line with step/total and epoch"
wait "$lpid"
st=$?
lpid=""
[ $st = 143 ] || fail "launch exited $st after SIGTERM"
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
