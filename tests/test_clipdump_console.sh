#!/usr/bin/env bash
# clipdump as a newcomer meets it on their own data: --out is made with its parents, each clip
# names its video id and time range (on the sheet and in DIR/clips.txt), small frames are
# enlarged (--scale, or at least 128 px by default), captions decode from the manifest's
# bpe_merges.txt without --bpe, and error slots are reported on the console with a count.
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep tools/clipdump
jt_tmp clipdump-console
tmp=$JT_TMP
png_size() { # "W H" from the IHDR
	echo $((0x$(head -c 20 "$1" | tail -c 4 | od -An -tx1 | tr -d ' \n'))) $((0x$(head -c 24 "$1" | tail -c 4 | od -An -tx1 | tr -d ' \n')))
}
jt_data "$tmp"
JT_FAIL_LOGS="$tmp/a.log $tmp/b.log"
tools/clipdump --manifest "$tmp/data/manifest" --eval --frames 2 --image-size 32 --positions 0-1 \
	--out "$tmp/new/deep/sheets" 2>"$tmp/a.log" || fail "clipdump into a missing folder"
[ -f "$tmp/new/deep/sheets/pos0.png" ] || fail "--out was not made with its parents: $(cat "$tmp/a.log")"
# video id (the CSV's, no extension) and time range; a decoded caption, not token ids
first=$(head -n 1 "$tmp/new/deep/sheets/clips.txt")
vid=$(sed -n 2p "$tmp/src/train.csv" | cut -d, -f1)
grep -qE "^position 0 sample 0 video ${vid%.*} [0-9]+\.[0-9]{2}-[0-9]+\.[0-9]{2} s crop" <<<"$first" ||
	fail "clip 0 does not name its video id and time range: $first"
grep -q "TOKENS" "$tmp/new/deep/sheets/clips.txt" && fail "captions left as token ids without --bpe: $first"
# 32-px frames enlarged to at least 128 px by default, 2x with --scale 2
read -r w h < <(png_size "$tmp/new/deep/sheets/pos0.png")
[ "$h" -ge 128 ] && [ "$w" -ge 256 ] || fail "32-px frames are not enlarged by default: sheet ${w}x$h"
tools/clipdump --manifest "$tmp/data/manifest" --eval --frames 2 --image-size 32 --positions 0-0 --scale 1 \
	--out "$tmp/s1" 2>/dev/null || fail "--scale 1"
tools/clipdump --manifest "$tmp/data/manifest" --eval --frames 2 --image-size 32 --positions 0-0 --scale 2 \
	--out "$tmp/s2" 2>/dev/null || fail "--scale 2"
read -r _ h1 < <(png_size "$tmp/s1/pos0.png")
read -r _ h2 < <(png_size "$tmp/s2/pos0.png")
[ $((h2 - h1)) = 32 ] || fail "--scale 2 did not double 32-px frames: heights $h1 and $h2"
# a missing chunk: its error slots are on the console, with a count by error
chunk=$(find "$tmp/data" -name '*.mp4' | sort | head -n 1)
rm "$chunk"
tools/clipdump --manifest "$tmp/data/manifest" --eval --frames 2 --image-size 32 --positions 0-7 --out "$tmp/b" \
	2>"$tmp/b.log" || fail "clipdump with a missing chunk"
grep -qE "warn: position [0-9]+ sample [0-9]+ video .* ERROR 1 \(missing\)" "$tmp/b.log" || fail "no console line for an error slot"
grep -qE "warn: [1-8] of 8 clips are error slots \([1-8] missing\)" "$tmp/b.log" || fail "no count of the error slots"
echo "ok: --out made, video id and time range, enlarged frames, captions without --bpe, error slots on the console"
