#!/usr/bin/env bash
# A video id that names one of prep's own outputs in ROOT (manifest, prep-report.txt,
# bpe_merges.txt) costs that video at most, never the run: "manifest.mp4" keeps its whole id as
# its folder (ROOT/manifest.mp4/, not ROOT/manifest/), an id whose folder would still be an
# output ("bpe_merges.txt", "prep-report.txt") is refused up front with a report line (exit 3),
# and the other videos are prepared into a manifest that verifies. An output path that is a
# folder already stops prep before anything is encoded.
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep
jt_tmp prep-collide
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 2 --heldout 0 --minutes 0.2 --size 96x64 --scene-seed 5 >/dev/null 2>&1 || fail "synth"
v="$tmp/src/videos"
cp "$v/train-0001.mp4" "$v/manifest.mp4"
cp "$v/train-0001.mp4" "$v/bpe_merges.txt.mp4"
cp "$v/train-0001.mp4" "$v/prep-report.txt.mp4"
{
	echo 'video,start,end,caption'
	echo 'train-0000,1.0,2.0,a red square moves left'
	echo 'manifest.mp4,1.0,2.0,a hostile name'
	echo 'bpe_merges.txt,1.0,2.0,another hostile name'
	echo 'prep-report.txt,1.0,2.0,a third one'
} >"$tmp/a.csv"
tools/prep --annotations "$tmp/a.csv" --video-root "$v" --out "$tmp/out" --train-bpe 600 --short-side 64 >"$tmp/log" 2>&1
rc=$?
r="$tmp/out/prep-report.txt"
[ $rc = 3 ] || fail "exit status $rc, want 3: $(tail -n 3 "$tmp/log")"
[ -f "$r" ] && [ -f "$tmp/out/manifest" ] && [ -f "$tmp/out/bpe_merges.txt" ] || fail "outputs: $(ls -a "$tmp/out")"
grep -q "video bpe_merges.txt: its chunk folder .* would be one of prep's own outputs" "$r" || fail "bpe_merges.txt not refused: $(cat "$r")"
grep -q "video prep-report.txt: its chunk folder .* would be one of prep's own outputs" "$r" || fail "prep-report.txt not refused: $(cat "$r")"
grep -q "summary: 2 samples, 2 dropped (2 bad video" "$r" || fail "summary: $(tail -n 1 "$r")"
[ -f "$tmp/out/manifest.mp4/0.mp4" ] || fail "manifest.mp4 not chunked into ROOT/manifest.mp4/: $(ls -a "$tmp/out")"
tools/prep --verify "$tmp/out/manifest" >"$tmp/v" 2>&1 || fail "verify: $(cat "$tmp/v")"
tools/prep --info "$tmp/out/manifest" | grep -q 'samples *2 ' || fail "the manifest: $(tools/prep --info "$tmp/out/manifest")"
# an output path that is a folder already: refused before any video is encoded
mkdir -p "$tmp/out2/manifest"
tools/prep --annotations "$tmp/a.csv" --video-root "$v" --out "$tmp/out2" --train-bpe 600 --short-side 64 >"$tmp/log2" 2>&1 &&
	fail "prep wrote into a ROOT whose manifest is a folder"
grep -q "manifest.* is not a file" "$tmp/log2" || fail "no message naming the folder: $(tail -n 2 "$tmp/log2")"
[ -e "$tmp/out2/train-0000" ] && fail "videos were encoded before the output was checked"
echo "ok: ids naming prep's outputs cost only themselves; the rest prepared and verified"
