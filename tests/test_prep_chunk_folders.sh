#!/usr/bin/env bash
# prep names chunk folders after the video id: an annotation that says "train-0000.mp4" gets
# ROOT/train-0000/ (not ROOT/train-0000.mp4/); a ROOT an earlier prep filled with such folders is
# reused as it is (its manifests name those paths), and two ids that would share a folder
# ("x.mp4", "x.mkv") each keep their whole id. The loader reads every layout.
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep tools/clipdump
jt_tmp prep-folders
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 2 --heldout 0 --minutes 0.3 --size 96x64 --scene-seed 3 >/dev/null 2>&1 || fail "synth"
sed -E 's/^(train-000[01]),/\1.mp4,/' "$tmp/src/train.csv" >"$tmp/ext.csv"
grep -q '^train-0000.mp4,' "$tmp/ext.csv" || fail "the CSV was not rewritten: $(head -n 2 "$tmp/ext.csv")"
prep() { tools/prep --annotations "$1" --video-root "$tmp/src/videos" --out "$2" --train-bpe 600 --short-side 64 >"$tmp/out" 2>&1 ||
	fail "prep $1: $(tail -n 3 "$tmp/out")"; }
readable() { # readable MANIFEST: every position of a few decodes
	tools/clipdump --manifest "$1" --positions 0-3 --frames 2 --image-size 32 --out "$tmp/sheets" >"$tmp/dump" 2>&1 ||
		fail "clipdump $1: $(tail -n 2 "$tmp/dump")"
	grep -q "no error slots" "$tmp/dump" || fail "$1 has chunks the loader cannot read: $(grep warn "$tmp/dump")"
}
prep "$tmp/ext.csv" "$tmp/a"
[ -d "$tmp/a/train-0000" ] && [ -d "$tmp/a/train-0001" ] || fail "folders: $(ls "$tmp/a")"
[ -e "$tmp/a/train-0000.mp4" ] && fail "a folder named with the extension"
tools/prep --info "$tmp/a/manifest" | grep -q "first chunk   train-0000/0.mp4" || fail "chunk paths: $(tools/prep --info "$tmp/a/manifest")"
readable "$tmp/a/manifest"
# the layout of an earlier prep: reused, nothing encoded again, read as it is
mv "$tmp/a/train-0000" "$tmp/a/train-0000.mp4"
prep "$tmp/ext.csv" "$tmp/a"
grep -q "2/2 videos (100%), 0 frames encoded" "$tmp/out" || fail "the earlier layout was encoded again: $(grep '^prep:' "$tmp/out")"
[ -e "$tmp/a/train-0000" ] && fail "a second folder made beside the earlier layout's"
tools/prep --info "$tmp/a/manifest" | grep -q "first chunk   train-0000.mp4/0.mp4" || fail "the earlier layout's paths are not kept"
readable "$tmp/a/manifest"
# two ids, one folder: each keeps its whole id
cp "$tmp/src/videos/train-0001.mp4" "$tmp/src/videos/train-0000.mkv"
{ cat "$tmp/ext.csv"; grep '^train-0001.mp4,' "$tmp/ext.csv" | sed 's/^train-0001.mp4,/train-0000.mkv,/'; } >"$tmp/two.csv"
prep "$tmp/two.csv" "$tmp/b"
[ -d "$tmp/b/train-0000.mp4" ] && [ -d "$tmp/b/train-0000.mkv" ] && [ -d "$tmp/b/train-0001" ] || fail "folders: $(ls "$tmp/b")"
readable "$tmp/b/manifest"
echo "ok: chunk folders named after the video id; an earlier layout reused; a shared name keeps the ids"
