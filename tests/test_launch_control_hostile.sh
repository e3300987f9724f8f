#!/usr/bin/env bash
# A control request is data, never code: hostile requests planted in RUN_DIR/control/
# (`add N[$(cmd)]`, `add x[1]`, absurd counts, several lines) are refused with a log line, run
# nothing and leave the supervisor alive (a valid request still works after them); the control
# directory is mode 0700, and a run directory whose control/ belongs to another user is refused.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl tools/ringstat
jt_tmp ctlhostile
tmp=$JT_TMP run=$tmp/run
JT_FAIL_LOGS="$tmp/first.out"
jt_data "$tmp"
model=("${JT_MODEL[@]}" --threads 1 --steps 1000000 --ckpt-every 1000)
jt_job "$tmp/first.out" 1 --manifest "$tmp/data/manifest" --run-dir "$run" -- "${model[@]}"
waitfor 60 test -s "$run/metrics.jsonl" || fail "no training step within 60 s"
[ "$(stat -c %a "$run/control")" = 700 ] || fail "$run/control has mode $(stat -c %a "$run/control"), want 700"
pwned=$tmp/PWNED
plant() { # plant NAME CONTENT: written aside and renamed in, as a request is
	printf '%s' "$2" >"$run/control/$1.tmp" && mv "$run/control/$1.tmp" "$run/control/$1"
}
plant 1 "add N[\$(touch $pwned)]"$'\n'
plant 2 "add x[1]"$'\n'
plant 3 "remove a[\$(touch $pwned.2)]"$'\n'
plant 4 "add 99999999999999999999"$'\n'
plant 5 "add 1"$'\n'"add \$(touch $pwned.3)"$'\n'
plant 6 "add -1"$'\n'
plant 7 "add 0x10"$'\n'
plant 8 "add 1;touch $pwned.4"$'\n'
for i in 1 2 3 4 5 6 7 8; do
	waitfor 20 test ! -e "$run/control/$i" || fail "request $i was not handled within 20 s"
done
sleep 1.5 # one more turn of the supervisor
ls "$pwned"* >/dev/null 2>&1 && fail "a control request ran a command: $(ls "$pwned"*)"
kill -0 "$JT_JOB" 2>/dev/null || fail "the supervisor died of a bad request: $(tail -n 5 "$tmp/first.out")"
n=$(grep -c "refused control request" "$run/logs/launch.log")
[ "$n" = 8 ] || fail "$n of 8 hostile requests were refused with a log line: $(grep -i request "$run/logs/launch.log")"
grep -q "refused control request 2: not 'add K'" "$run/logs/launch.log" || fail "the refusal does not say why"
for f in "$run"/control/*.reply; do
	grep -q "refused" "$f" || fail "the reply $f does not say the request was refused"
done
live=$(for f in "$run"/pids/loaderd-[0-9]*.pid; do kill -0 "$(cat "$f")" 2>/dev/null && echo; done | wc -l)
[ "$live" = 1 ] || fail "$live loaders after the hostile requests, want 1 (none added)"
# the supervisor still answers a valid request, and the client refuses a non-count itself
tools/launch.sh --add-loaders 1 --run-dir "$run" | grep -q "loaders now: 2" || fail "--add-loaders 1 after the hostile requests"
tools/launch.sh --add-loaders '1[$(id)]' --run-dir "$run" >"$tmp/client.out" 2>&1 && fail "--add-loaders with a non-count was sent"
# a control/ whose mode changed (another directory put in its place) is not read
chmod 777 "$run/control"
plant 9 "add 1"$'\n'
sleep 3
[ -e "$run/control/9" ] || fail "a request in a control/ of mode 777 was taken"
grep -q "ignoring control requests in .*mode is 777" "$run/logs/launch.log" || fail "no log line about control/ of mode 777"
chmod 700 "$run/control"
tools/launch.sh --stop --run-dir "$run" --wait >/dev/null 2>&1
jt_job_end
# a run directory whose control/ another user owns is refused before anything starts
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	run2=$tmp/run2
	mkdir -p "$run2/control" && chown nobody "$run2/control" && chmod 777 "$run2/control"
	tools/launch.sh 1 --manifest "$tmp/data/manifest" --run-dir "$run2" -- "${model[@]}" --steps 2 >"$tmp/second.out" 2>&1 &&
		fail "a job started with a control/ owned by nobody"
	grep -q "control is not a directory of $(id -un) (owner nobody)" "$tmp/second.out" || fail "the refusal does not name the owner: $(tail -n 3 "$tmp/second.out")"
	pgrep -f "loaderd.*$run2" >/dev/null && fail "a loader was left running"
else
	echo "note: not root, the foreign-owner case is not checked"
fi
echo "ok: hostile control requests are refused, run nothing and leave the supervisor alive; control/ is 0700 and owned"
