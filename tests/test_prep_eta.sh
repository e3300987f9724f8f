#!/usr/bin/env bash
# prep's progress with one long video: before the video is done, the line gives the share of its
# frames done and an ETA (it used to say "ETA unknown until a video is done" all along).
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep
jt_tmp prep-eta
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 1 --heldout 0 --minutes 1.5 --size 320x180 --scene-seed 2 >/dev/null 2>&1 || fail "synth"
tools/prep --annotations "$tmp/src/train.csv" --video-root "$tmp/src/videos" --out "$tmp/data" -j 1 --train-bpe 600 \
	--progress-every 0.2 >"$tmp/out" 2>&1 || fail "prep: $(tail -n 3 "$tmp/out")"
progress=$(grep '^prep: ' "$tmp/out")
grep -qE "^prep: 0/1 videos \([1-9][0-9]?%\), [1-9][0-9]* frames encoded, .* ETA 0:[0-9]{2}:[0-9]{2}$" <<<"$progress" ||
	fail "no ETA while the one video is being cut: $progress"
tail -n 1 <<<"$progress" | grep -q "1/1 videos (100%), .* done in" || fail "last line: $(tail -n 1 <<<"$progress")"
echo "ok: $(grep -c 'ETA 0:' <<<"$progress") progress lines with an ETA inside one video"
