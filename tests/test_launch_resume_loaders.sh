#!/usr/bin/env bash
# Loaders added live are restored on resume: a job started with one loader, given two more with
# --add-loaders and stopped, resumes with three (RUN_DIR/loaders keeps the count), as its first
# console line says; --loaders-per-node on the resume sets them instead.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl tools/ringstat
jt_tmp loaders
tmp=$JT_TMP run=$tmp/run lpid=""
cleanup() {
	[ -n "$lpid" ] && kill -TERM "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	jt_cleanup
}
trap cleanup EXIT
live_loaders() { # loaderd processes of the job that are alive
	local n=0 f
	for f in "$run"/pids/loaderd-[0-9]*.pid; do [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && n=$((n + 1)); done
	echo $n
}
jt_data "$tmp"
model=("${JT_MODEL[@]}" --threads 1 --steps 1000000 --ckpt-every 20)
tools/launch.sh 1 --manifest "$tmp/data/manifest" --run-dir "$run" -- "${model[@]}" >"$tmp/first.out" 2>&1 &
lpid=$!
waitfor 60 test -s "$run/metrics.jsonl" || fail "no training step within 60 s: $(tail -n 5 "$tmp/first.out")"
[ "$(cat "$run/loaders")" = 1 ] || fail "RUN_DIR/loaders says $(cat "$run/loaders" 2>&1) at start, want 1"
tools/launch.sh --add-loaders 2 --run-dir "$run" | grep -q "loaders now: 3" || fail "--add-loaders 2"
[ "$(cat "$run/loaders")" = 3 ] || fail "RUN_DIR/loaders says $(cat "$run/loaders") after --add-loaders 2"
tools/launch.sh --stop --run-dir "$run" --wait >/dev/null 2>&1
wait "$lpid"
lpid=""
tools/launch.sh --resume "$run" >"$tmp/second.out" 2>&1 &
lpid=$!
waitfor 60 grep -q "trainers started" "$tmp/second.out" || fail "the resume did not start: $(tail -n 5 "$tmp/second.out")"
grep -q "3 loader(s) over .* (as the run last had them" "$tmp/second.out" || fail "the resume does not say 3 loaders: $(head -n 3 "$tmp/second.out")"
waitfor 20 bash -c "[ \$(ls $run/pids/loaderd-[0-9]*.pid | wc -l) = 3 ]" || fail "the resumed job has $(live_loaders) loaders, want 3"
[ "$(live_loaders)" = 3 ] || fail "the resumed job has $(live_loaders) live loaders, want 3"
tools/launch.sh --stop --run-dir "$run" --wait >/dev/null 2>&1
wait "$lpid"
lpid=""
# an explicit count on the resume wins
tools/launch.sh --resume "$run" --loaders-per-node 1 >"$tmp/third.out" 2>&1 &
lpid=$!
waitfor 60 grep -q "trainers started" "$tmp/third.out" || fail "the third start: $(tail -n 5 "$tmp/third.out")"
grep -q "1 loader(s) over" "$tmp/third.out" || fail "--loaders-per-node 1 on resume: $(head -n 3 "$tmp/third.out")"
tools/launch.sh --stop --run-dir "$run" --wait >/dev/null 2>&1
wait "$lpid"
lpid=""
echo "ok: loaders added live are restored on resume; --loaders-per-node on the resume sets them"
