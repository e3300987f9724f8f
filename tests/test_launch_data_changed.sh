#!/usr/bin/env bash
# A job's data changing under it (issue 31 §2, §3): checkpoints record the dataset, so a run whose
# manifest was prepared again with other data is refused at --resume, naming both datasets and
# --resume-on-new-data; with that flag it goes on from the weights (the FastCLIP u estimators of
# the other sample count start over) to the new --steps. And a dataset deleted under a running job
# stops it with a message instead of skipping failed samples forever.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl
repo=$(pwd)
jt_tmp datachg
tmp=$JT_TMP
launch() { "$repo/tools/launch.sh" "$@"; }
jt_data "$tmp"
tools/prep --annotations "$tmp/src/heldout.csv" --video-root "$tmp/src/videos" --out "$tmp/other" --short-side 64 \
	--chunk-sec 10 --bpe "$tmp/data/bpe_merges.txt" >/dev/null 2>&1 || fail "prep of the other dataset"
cd "$tmp" || exit 1
cp -r data job
launch 1 --manifest job/manifest --run-dir runs/a -- "${JT_MODEL[@]}" --steps 4 --ckpt-every 2 >first.out 2>&1 ||
	fail "first run: $(tail -n 5 first.out)"

# the data prepared again into the same folder: another dataset at the run's manifest path
rm -rf job && cp -r other job
out=$(launch --resume runs/a -- --steps 6 2>&1) && fail "a resume on another dataset ran: $(tail -n 5 <<<"$out")"
grep -q "cannot resume on --manifest $tmp/job/manifest (dataset [0-9a-f]\{16\}): the checkpoint of step 4 .* was trained on $tmp/job/manifest (dataset [0-9a-f]\{16\}).*--resume-on-new-data" <<<"$out" ||
	fail "the refusal does not name both datasets and the flag: $out"
launch --resume runs/a -- --steps 6 --resume-on-new-data >second.out 2>&1 || fail "--resume-on-new-data: $(tail -n 8 second.out)"
grep -q "plan: --resume-on-new-data: the checkpoint of step 4" second.out || fail "no plan line for the new data: $(grep plan second.out)"
grep -q "rank 0: resumed from $tmp/runs/a/ckpt at step 4" second.out || fail "it did not resume at step 4: $(tail -n 5 second.out)"
grep -q "finished at step 6 of 6" second.out || fail "the run on the new data did not finish: $(tail -n 5 second.out)"
n=$("$repo/tools/prep" --info job/manifest | sed -n "s/^samples *\([0-9]*\).*/\1/p")
grep -q "rank 0: plan: steps 4 to 6, .* ($n samples," second.out || fail "the run on the new data does not use its $n samples: $(grep "plan: steps" second.out)"
grep -q -- "--resume-on-new-data" runs/a/launch.conf && fail "launch.conf keeps --resume-on-new-data for later resumes"

# the dataset deleted under a running job: the run stops, it does not skip failures forever
rm -rf job && cp -r data job
launch 1 --manifest job/manifest --run-dir runs/b -- "${JT_MODEL[@]}" --steps 100000 >third.out 2>&1 &
lpid=$!
waitfor 60 grep -q '"step":3,' runs/b/metrics.jsonl 2>/dev/null || { kill $lpid; fail "the job did not start: $(tail -n 5 third.out)"; }
rm -rf job/train-*
for _ in $(seq 600); do kill -0 $lpid 2>/dev/null || break; sleep 0.1; done
if kill -0 $lpid 2>/dev/null; then
	kill $lpid; wait $lpid
	fail "the job went on 60 s after its dataset was deleted: $(tail -n 5 third.out)"
fi
wait $lpid && fail "the job exited 0 after its dataset was deleted"
grep -q "all failed in the loaders.*no longer readable" third.out || fail "no message saying why the job stopped: $(tail -n 8 third.out)"
echo "ok: a resume on new data is refused unless --resume-on-new-data, then continues; a deleted dataset stops the job"
