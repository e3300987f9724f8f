#!/usr/bin/env bash
# launch.sh --stop is a SIGTERM and a mark in the run directory. bash 5.2 drops a trapped signal
# that lands while it parses a command substitution ("trap: unexpected EOF"), so the signal alone
# could leave --stop --wait waiting forever: the job must stop on the mark alone, cleanly (exit 0,
# final checkpoint, nothing left), and a resumed job must not take a stale mark for a request.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl
jt_tmp stopmark
tmp=$JT_TMP run=$tmp/run
JT_FAIL_LOGS="$tmp/job.out"
jt_data "$tmp"
jt_train "$tmp/job.out" --ckpt-every 0
ring=$(jt_ring "$run")
: >"$run/stop-requested" # the mark of --stop, its SIGTERM lost
t0=$(date +%s)
waitfor 20 bash -c "! kill -0 $JT_JOB 2>/dev/null" || fail "the job did not stop on the mark within 20 s"
jt_job_end
[ $JT_JOB_STATUS = 0 ] || fail "a stop asked for exited $JT_JOB_STATUS, want 0"
grep -q "stopping (launch.sh --stop)" "$tmp/job.out" || fail "no stop on request in the console"
grep -q "stopped at step [0-9]* of 1000000; checkpoint" "$tmp/job.out" || fail "no final checkpoint in the summary"
[ -e "$run/stop-requested" ] && fail "the mark stayed"
[ -e "$run/launch.pid" ] && fail "launch.pid stayed"
[ -e "/dev/shm/$ring" ] && fail "the ring stayed"
echo "stopped on the mark alone in $(($(date +%s) - t0)) s"

# a mark left by a job killed outright is not a request to the next one
: >"$run/stop-requested"
jt_job "$tmp/job.out" --resume "$run"
waitfor 60 grep -q "trainers started" "$tmp/job.out" || fail "the resumed job did not start"
sleep 3
kill -0 "$JT_JOB" 2>/dev/null || fail "the resumed job stopped on a stale mark"
tools/launch.sh --stop --run-dir "$run" --wait >/dev/null 2>&1
jt_job_end
[ $JT_JOB_STATUS = 0 ] || fail "--stop of the resumed job exited $JT_JOB_STATUS"
echo "ok: a --stop whose signal is lost still stops the job; a stale mark does not"
