#!/usr/bin/env bash
# libav's own messages go through the logger, summarized: prep of a video whose middle is
# garbage makes libavcodec complain hundreds of times; prep prints each kind of message once
# (as "prep[pid] warn: libav [h264]: ...") and a count per kind at the end, and --libav-verbose
# shows every one.
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep
jt_tmp prep-libav
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 1 --heldout 0 --minutes 0.3 --size 160x96 --scene-seed 1 >/dev/null 2>&1 || fail "synth"
v=$(ls "$tmp"/src/videos/*)
size=$(stat -c %s "$v")
# the middle third overwritten with one constant byte: every picture there fails to decode
head -c $((size / 3)) /dev/zero | tr '\0' '\135' | dd of="$v" bs=1 seek=$((size / 3)) conv=notrunc status=none
JT_FAIL_LOGS="$tmp/a.err"
tools/prep --annotations "$tmp/src/train.csv" --video-root "$tmp/src/videos" --out "$tmp/a" --train-bpe 600 \
	>/dev/null 2>"$tmp/a.err"
tools/prep --annotations "$tmp/src/train.csv" --video-root "$tmp/src/videos" --out "$tmp/b" --train-bpe 600 \
	--libav-verbose >/dev/null 2>"$tmp/b.err"
all=$(grep -c 'libav \[' "$tmp/b.err")
some=$(grep -c 'libav \[' "$tmp/a.err")
[ "$all" -ge 50 ] || fail "the damaged video made only $all libav messages with --libav-verbose: the test lost its damage"
[ "$some" -le 20 ] || fail "$some libav lines without --libav-verbose ($all with it): not summarized"
grep -q '^\[' "$tmp/a.err" && fail "libav printed on its own: $(grep -m 1 '^\[' "$tmp/a.err")"
grep -qE "prep\[[0-9]+\] warn: libav \[[^]]+\]: [0-9]+ messages '.*' \(the first: " "$tmp/a.err" || fail "no count per kind at the end"
echo "ok: $all libav messages with --libav-verbose, $some lines (each kind once, then counts) without"
