#!/usr/bin/env bash
# The commands launch.sh prints for the user to copy (continue, train longer, watch the ring,
# stop) are shell-quoted: with a run directory whose name has a space and a quote, the printed
# "to train longer" command, pasted into a shell, resumes that run, and the ringstat and stop
# commands name that directory as one word.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl tools/ringstat
repo=$(pwd)
jt_tmp quoted
jt_data "$JT_TMP"
run="$JT_TMP/runs/it's a run"
JT_FAIL_LOGS="$JT_TMP/first.out $JT_TMP/second.out"
cd "$JT_TMP" || exit 1
"$repo/tools/launch.sh" 1 --manifest data/manifest --run-dir "$run" -- "${JT_MODEL[@]}" --threads 1 --steps 2 \
	>first.out 2>&1 || fail "first run"
# the command after "to train longer: ", run by a shell as pasted
cmd=$(sed -n 's/.*launch: to train longer: //p' first.out | tail -n 1)
[ -n "$cmd" ] || fail "no 'to train longer' command"
bash -c "$cmd" >second.out 2>&1 || fail "the printed command failed: $cmd"
grep -q "finished at step 4 of 4" second.out || fail "the printed command did not resume the run: $cmd"
# the watch and stop commands: the run directory is one word of each
line=$(sed -n 's/.*launch: watch the ring: //p' first.out | tail -n 1)
watch=${line%%; stop:*}
stop=${line##*Ctrl-C or }
eval "set -- $watch"
[ "$2" = --run-dir ] && [ "$3" = "$run" ] && [ $# = 4 ] || fail "the ringstat command splits the path: $watch"
eval "set -- $stop"
[ "$2" = --stop ] && [ "$4" = "$run" ] && [ $# = 4 ] || fail "the stop command splits the path: $stop"
echo "printed commands quote a run directory with a space and a quote: resume ran, ringstat and stop name it"
