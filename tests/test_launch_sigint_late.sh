#!/usr/bin/env bash
# A second Ctrl-C that lands while the job is already stopping reaches every process of the
# terminal's group, the launcher's own helpers included (sleep, sed, ringctl, trainer query). It
# must not cost anything: whenever it comes, the job still exits 130 with the ring, the rank group
# and launch.pid gone, nothing of it left running, and the console's summary with the command that
# continues. The second signal is sent at fractions of the time a single Ctrl-C's stop took here,
# so the stop's last part (the cleanup, where helpers run) is hit on a slow or a fast machine.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl
command -v setsid >/dev/null || { echo "skip: no setsid"; exit 77; }
jt_tmp sigint-late
tmp=$JT_TMP
run=$tmp/run
JT_FAIL_LOGS="$tmp/job.out"
jpid="" pgid="" ring=""
cleanup() {
	[ -n "$pgid" ] && kill -KILL -- "-$pgid" 2>/dev/null
	[ -n "$jpid" ] && wait "$jpid" 2>/dev/null
	[ -n "$ring" ] && tools/ringctl destroy --ring "$ring" >/dev/null 2>&1 && trainer/trainer query comm-unlink --comm "$ring-comm" >/dev/null 2>&1
	jt_cleanup
}
trap cleanup EXIT
jt_data "$tmp"
model=("${JT_MODEL[@]}" --threads 1 --ckpt-every 0)

# start: the first run, or --resume of the one before (in a session of its own, SIGINT at its
# default action as in a terminal); returns once it has trained a few steps
start() {
	if [ -s "$run/ckpt/LATEST" ]; then
		setsid -w env --default-signal=INT tools/launch.sh --resume "$run" >"$tmp/job.out" 2>&1 &
	else
		setsid -w env --default-signal=INT tools/launch.sh 2 --manifest "$tmp/data/manifest" --run-dir "$run" \
			--loaders-per-node 2 -- "${model[@]}" --steps 1000000 >"$tmp/job.out" 2>&1 &
	fi
	jpid=$!
	waitfor 30 test -s "$run/launch.pid" || fail "no launch.pid"
	pgid=$(ps -o pgid= -p "$(cat "$run/launch.pid")" | tr -d ' ')
	[ -n "$pgid" ] || fail "no process group"
	ring=$(jt_ring "$run")
	local lines
	lines=$(cat "$run/metrics.jsonl" 2>/dev/null | wc -l)
	waitfor 60 eval '[ "$(cat "$run/metrics.jsonl" 2>/dev/null | wc -l)" -ge $((lines + 5)) ]' || fail "no training progress"
}
# finish WHAT: the job ended as a stop must end, whatever signal came when
finish() {
	waitfor 90 eval '! kill -0 "$jpid" 2>/dev/null' || fail "$1: the job did not end within 90 s"
	wait "$jpid"
	local st=$? left
	t_end=$(date +%s%N) jpid=""
	[ $st = 130 ] || fail "$1: launch exited $st (want 130)"
	sleep 0.3
	left=$(ps -o stat=,pid=,args= -g "$pgid" | grep -v '^Z')
	[ -n "$left" ] && fail "$1: processes of the job left: $left"
	pgid=""
	[ -e "/dev/shm/$ring" ] && fail "$1: the ring $ring is left"
	[ -e "/dev/shm/$ring-comm" ] && fail "$1: the rank group $ring-comm is left"
	[ -e "$run/launch.pid" ] && fail "$1: launch.pid is left"
	grep -q "to continue: tools/launch.sh --resume $run\$" "$tmp/job.out" || fail "$1: the console lacks the resume command"
	grep -q "without a checkpoint" "$run"/logs/trainer-*.log && fail "$1: a trainer exited without its checkpoint"
	return 0
}

# how long one Ctrl-C's stop takes on this machine, in ms
start
t0=$(date +%s%N)
kill -INT -- "-$pgid"
finish "one Ctrl-C"
stop_ms=$(((t_end - t0) / 1000000))
echo "a Ctrl-C's stop took $stop_ms ms"

# a second Ctrl-C at 30%..110% of that
for pct in 30 50 65 75 85 95 110; do
	start
	kill -INT -- "-$pgid"
	d=$((stop_ms * pct / 100))
	sleep "$((d / 1000)).$(printf %03d $((d % 1000)))"
	kill -INT -- "-$pgid" 2>/dev/null # (the job may be gone)
	finish "a second Ctrl-C at $pct% of the stop"
done
echo "ok: a second Ctrl-C at 30..110% of a ${stop_ms} ms stop left nothing behind"
