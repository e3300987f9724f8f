#!/usr/bin/env bash
# Ctrl-C as a terminal sends it: SIGINT to the job's whole process group (launch.sh, loaders,
# trainers; launch.sh then sends SIGTERM too), with --ckpt-every 0 so only the final checkpoint
# can keep the work. The job must end with a checkpoint of the last step it trained and print
# the command that continues it; that command continues from there, and a double Ctrl-C
# (SIGINT twice, the trainers see INT, TERM, INT) still ends in a checkpoint of the last step.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl
command -v setsid >/dev/null || { echo "skip: no setsid"; exit 77; }
jt_tmp sigint
tmp=$JT_TMP
run=$tmp/run
JT_FAIL_LOGS="$tmp/job*.out $run/logs/trainer-*.log"
jpid="" pgid=""
cleanup() {
	[ -n "$pgid" ] && kill -KILL -- "-$pgid" 2>/dev/null
	[ -n "$jpid" ] && wait "$jpid" 2>/dev/null
	local ring
	ring=$(jt_ring "$run")
	[ -n "$ring" ] && tools/ringctl destroy --ring "$ring" >/dev/null 2>&1 && trainer/trainer query comm-unlink --comm "$ring-comm" >/dev/null 2>&1
	jt_cleanup
}
trap cleanup EXIT
last_step() { sed -n 's/.*"step":\([0-9]*\).*/\1/p' "$run/metrics.jsonl" | tail -n 1; }
steps_past() { [ -s "$run/metrics.jsonl" ] && [ "$(last_step)" -ge "$1" ]; }

# job NAME ARGS...: a launch.sh in a session of its own, with SIGINT at its default action as in
# a terminal (a background job of a script would inherit it ignored)
job() {
	local name=$1
	shift
	setsid -w env --default-signal=INT "$@" >"$tmp/$name.out" 2>&1 &
	jpid=$!
	waitfor 30 test -s "$run/launch.pid" || fail "$name: no launch.pid"
	pgid=$(ps -o pgid= -p "$(cat "$run/launch.pid")" | tr -d ' ')
	[ -n "$pgid" ] || fail "$name: no process group"
}
# ctrl_c TIMES: SIGINT to the whole group, as a terminal does; then the job must end
ctrl_c() {
	kill -INT -- "-$pgid"
	[ "$1" -gt 1 ] && { sleep 0.05; kill -INT -- "-$pgid"; }
	waitfor 90 eval '! kill -0 "$jpid" 2>/dev/null' ||
		fail "the job did not end within 90 s of Ctrl-C: $(ps -o pid,stat,wchan:20,args -g "$pgid"; for p in $(pgrep -g "$pgid"); do echo "$p: $(grep -E '^Sig(Blk|Ign|Cgt)' /proc/$p/status | tr '\n' ' ')"; done)"
	wait "$jpid"
	local st=$?
	jpid=""
	[ $st = 130 ] || fail "launch exited $st after Ctrl-C (want 130)"
	sleep 0.5
	# (an exited shell of the job that init has not reaped yet is no process left behind)
	left=$(ps -o stat=,pid=,args= -g "$pgid" | grep -v '^Z')
	[ -n "$left" ] && fail "processes of the job left: $left"
	pgid=""
}
# the checkpoint is of the last step trained, and the console says how to continue
check_stop() {
	local out=$tmp/$1.out s
	s=$(last_step)
	[ "$(cat "$run/ckpt/LATEST" 2>/dev/null)" = "$(printf 'ckpt-%08d.safetensors' "$s")" ] ||
		fail "$1: LATEST is '$(cat "$run/ckpt/LATEST" 2>/dev/null)', the last step trained is $s"
	grep -q "without a checkpoint" "$run"/logs/trainer-*.log && fail "$1: a trainer exited without its checkpoint"
	grep -q "stopped at step $s of " "$out" || fail "$1: the console does not say where the job stopped"
	grep -q "to continue: tools/launch.sh --resume $run\$" "$out" || fail "$1: the console lacks the resume command"
	[ -e "/dev/shm/$(jt_ring "$run")" ] && fail "$1: the ring is left"
	echo "$1: Ctrl-C at step $s kept a checkpoint of step $s"
}

jt_data "$tmp"
model=("${JT_MODEL[@]}" --threads 1 --ckpt-every 0)

job job1 tools/launch.sh 2 --manifest "$tmp/data/manifest" --run-dir "$run" --loaders-per-node 2 -- "${model[@]}" --steps 1000000
waitfor 120 steps_past 20 || fail "no training progress"
ctrl_c 1
check_stop job1
s1=$(last_step)

# the printed command, as printed, continues from that step; a double Ctrl-C keeps the work too
resume=$(sed -n 's/.*to continue: //p' "$tmp/job1.out" | tail -n 1)
read -r -a cmd <<<"$resume"
# (the trainers' logs go on across runs: job2's lines are those after these)
declare -A before
for f in "$run"/logs/trainer-*.log; do before[$f]=$(wc -l <"$f"); done
job job2 "${cmd[@]}"
waitfor 120 steps_past $((s1 + 20)) || fail "the resumed job made no progress"
waitfor 10 grep -q "rank 0: resumed from $run/ckpt at step $s1" "$tmp/job2.out" || fail "the resumed job did not start at step $s1"
ctrl_c 2
check_stop job2
# two SIGINTs close together may reach launch.sh's shell as one (signals do not queue), but the
# trainers see at least INT, TERM: one of them must have answered a later signal
acked=0
grep -q "already stopping" "$tmp/job2.out" && acked=1
for f in "${!before[@]}"; do tail -n +$((before[$f] + 1)) "$f" | grep -q "already stopping" && acked=1; done
[ $acked = 1 ] || fail "no later signal of job2 was acknowledged"
echo "ok: Ctrl-C kept step $s1; resumed and a double Ctrl-C kept step $(last_step)"
