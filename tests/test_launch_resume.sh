#!/usr/bin/env bash
# launch.sh's start and resume cases as a user meets them: refused requests write nothing (no
# run directory, launch.conf untouched) and name the fix; a run started with relative paths
# resumes from another directory; `--resume DIR -- --steps N` is kept in launch.conf; resuming a
# finished run says so and starts nothing; resuming a run without a checkpoint warns loudly;
# the console tells the story (plan, evaluations, checkpoints, the summary and its command).
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl
repo=$(pwd)
jt_tmp resume
tmp=$JT_TMP
launch() { "$repo/tools/launch.sh" "$@"; }
last_step() { sed -n 's/.*"step":\([0-9]*\).*/\1/p' "$1/metrics.jsonl" | tail -n 1; }
# refused CODE PATTERN ARGS...: launch.sh exits CODE with PATTERN in its message
refused() {
	local code=$1 pat=$2 out st
	shift 2
	out=$(launch "$@" 2>&1)
	st=$?
	[ $st = "$code" ] || fail "launch $* exited $st, want $code: $out"
	grep -q -- "$pat" <<<"$out" || fail "launch $*: message lacks '$pat': $out"
}

jt_data "$tmp"
tools/prep --annotations "$tmp/src/heldout.csv" --video-root "$tmp/src/videos" --out "$tmp/heldout" --short-side 64 \
	--chunk-sec 10 --bpe "$tmp/data/bpe_merges.txt" >/dev/null 2>&1 || fail "prep heldout"
model=("${JT_MODEL[@]}")
cd "$tmp" || exit 1

# refused before anything is written
refused 1 "tools/prep --annotations" 1 --manifest src/train.csv --run-dir runs/a -- "${model[@]}"
refused 2 "trainer flags go after --" 1 --manifest data/manifest --model tiny
refused 2 "spelled --run-dir" --stop --run runs/a
refused 2 "modle" 1 --manifest data/manifest --run-dir runs/a -- --modle tiny
refused 2 "loaders-per-node must be a whole number" 1 --manifest data/manifest --loaders-per-node x
[ -e runs ] && fail "a refused start left $(find runs)"

# a run with relative paths, an evaluation and checkpoints; the console tells the story
launch 1 --manifest data/manifest --run-dir runs/a -- "${model[@]}" --steps 6 --ckpt-every 3 \
	--eval-manifest heldout/manifest --eval-every 3 >first.out 2>&1 || fail "first run: $(tail -n 5 first.out)"
run=$tmp/runs/a
for want in "steps: 6 (7 per epoch of 26 samples); threads: [0-9]* per rank" "rank 0: plan: steps 0 to 6" "rank 0: model tiny: .* backend cpu" \
	"rank 0: note: with --loss fastclip-v3 the loss column" "rank 0: checkpoint at step 3: $run/ckpt/ckpt-00000003" \
	"rank 0: eval at step 3: R@1" "held-out at step 6: R@1 text->video" "finished at step 6 of 6; checkpoint $run/ckpt/ckpt-00000006" \
	"to train longer: .*tools/launch.sh --resume $run -- --steps 12"; do
	grep -q -- "$want" first.out || fail "the console lacks '$want'"
done
grep -q "eval-manifest $tmp/heldout/manifest" runs/a/launch.conf || fail "launch.conf keeps a relative path: $(cat runs/a/launch.conf)"

# a new start on a run with a checkpoint is refused and changes nothing
before=$(cd runs/a && find . -type f -exec md5sum {} + | sort)
refused 1 "resume $run" 1 --manifest data/manifest --run-dir runs/a -- "${model[@]}" --steps 6
refused 1 "resume $run" 2 --manifest data/manifest --run-dir runs/a -- "${model[@]}" --steps 6
[ "$(cd runs/a && find . -type f -exec md5sum {} + | sort)" = "$before" ] || fail "a refused start changed the run directory"

# resuming a finished run says so and starts nothing
out=$(launch --resume runs/a 2>&1) || fail "resuming a finished run failed: $out"
grep -q "is finished: its checkpoint is at step 6 of 6" <<<"$out" || fail "no 'finished' message: $out"
[ "$(cd runs/a && find . -type f -exec md5sum {} + | sort)" = "$before" ] || fail "resuming a finished run changed it"

# from another directory, with more steps: kept in launch.conf, so a plain resume knows the new end
(cd / && "$repo/tools/launch.sh" --resume "$run" -- --steps 9 --eval-every 100) >second.out 2>&1 || fail "resume from /: $(tail -n 5 second.out)"
[ "$(last_step "$run")" = 9 ] || fail "the resumed run ended at step $(last_step "$run"), not 9"
grep -q "rank 0: resumed from $run/ckpt at step 6" second.out || fail "the resume did not start at step 6"
[ "$(grep -o -- '--steps [0-9]*' runs/a/launch.conf)" = "--steps 9" ] || fail "launch.conf does not keep --steps 9 once: $(cat runs/a/launch.conf)"
grep -q -- "--eval-every 100" runs/a/launch.conf || fail "launch.conf lost --eval-every 100"
out=$(launch --resume runs/a 2>&1)
grep -q "at step 9 of 9" <<<"$out" || fail "a later resume does not continue toward --steps 9: $out"

# a run without a checkpoint: --resume warns loudly, and the trainer too, then trains from 0
mkdir -p runs/b && sed 's/--steps 9/--steps 2/; s/--ckpt-every 3/--ckpt-every 0/' runs/a/launch.conf >runs/b/launch.conf
launch --resume runs/b >third.out 2>&1 || fail "resume without checkpoint: $(tail -n 5 third.out)"
grep -q "WARNING: $tmp/runs/b has no checkpoint: --resume starts this run again from step 0" third.out || fail "no loud warning: $(cat third.out)"
grep -q "rank 0: warn: --resume: .* holds no checkpoint" third.out || fail "the trainer's warning is not on the console"
[ "$(last_step runs/b)" = 2 ] || fail "the run without a checkpoint did not train from 0 to 2"
echo "ok: refusals write nothing; relative paths resume from /; --steps kept; finished and empty runs said so"
