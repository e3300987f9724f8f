#!/usr/bin/env bash
# A zeroed 4 KB block inside a source video's H.264 slice data (issue 31 §4) is reported, never
# prepared silently: libavcodec decodes these zeros as valid CABAC syntax (no error, no flag, no
# log line) and the frames until the next keyframe come out garbled, so prep checks the NAL
# units' bytes itself; the video is reported damaged with its frame span, the clips over it are
# dropped (exit 3), the clean parts stay, and --verify --deep finds such a block in a chunk.
set -eu
synth=tools/synth prep=tools/prep
[ -x $synth ] && [ -x $prep ] || { echo "skip: tools/synth or tools/prep not built (needs libav)"; exit 77; }
d=$(mktemp -d /tmp/test_prep_zeroed_block_XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# 1280x720: the synthetic picture is smooth, so only a large frame has keyframes over 4 KB
$synth --out "$d/src" --videos 1 --heldout 0 --minutes 0.12 --size 1280x720 --fps 10 >/dev/null 2>&1
v="$d/src/videos"
cp "$v/train-0000.mp4" "$v/dmg.mp4"
# idr_last FILE MIN: byte offset of the last length-prefixed IDR NAL unit (header 0x65, then
# 0x88: the start of an I slice at macroblock 0) of MIN or more bytes that fits in the file,
# counted from its 4-byte length (coreutils and awk only: a fresh machine has no python3)
idr_last() {
	od -An -v -tu1 "$1" | tr -s ' ' '\n' | awk -v min="$2" '
		NF { b[n % 6] = $1; n++
		     if (n >= 6 && $1 == 136 && b[(n - 2) % 6] == 101) {
			len = ((b[(n - 6) % 6] * 256 + b[(n - 5) % 6]) * 256 + b[(n - 4) % 6]) * 256 + b[(n - 3) % 6]
			if (len >= min) { c[k] = n - 6; l[k++] = len }
		     } }
		END { for (i = k - 1; i >= 0; i--) if (c[i] + 4 + l[i] <= n) { print c[i]; exit 0 }; exit 1 }'
}
# zero FILE OFFSET: 4096 zero bytes at OFFSET, in place
zero() { dd if=/dev/zero of="$1" bs=1 seek="$2" count=4096 conv=notrunc status=none; }
idr=$(idr_last "$v/dmg.mp4" 5000) || fail "no keyframe of 5000 bytes or more in the source"
# 682 bytes in: inside the slice data, where libavcodec 5.1 finds nothing wrong with the zeros
zero "$v/dmg.mp4" $((idr + 682))
{
	echo 'video,start,end,caption'
	for s in 0 2 4 6; do echo "dmg,$s,$((s + 1)),clip at $s"; done
	echo 'train-0000,6,7,a clean clip'
} >"$d/ann.csv"
set +e
$prep --annotations "$d/ann.csv" --video-root "$v" --out "$d/out" --chunk-sec 5 --short-side 96 2>"$d/log"
rc=$?
set -e
r="$d/out/prep-report.txt"
[ -f "$r" ] && cat "$r"
[ $rc = 3 ] || { cat "$d/log"; fail "prep exit status $rc, want 3 (damaged frames dropped)"; }
grep -q "^video dmg: [0-9]* frames decode with errors (.*): frames* [0-9-]* (.* s).*; clips overlapping them are dropped" "$r" ||
	fail "the video with the zeroed block and its frame span are not reported"
grep -q "^line [0-9]*: video dmg: .* overlaps frames [0-9-]* that decode with errors" "$r" ||
	fail "the clip over the zeroed block was not dropped"
grep -q "^line 2: video dmg" "$r" && fail "the clip before the damage was dropped"
grep -q "1 videos with damaged frames" "$r" || fail "the summary does not count the damaged video"
grep -q "train-0000" "$r" && fail "the clean video was reported"
# --verify --deep finds such a block in a 720p CABAC chunk (a CAVLC chunk, prep's default, makes
# libavcodec fail on the zeros by itself), again where libavcodec 5.1 decodes it without a word
echo 'video,start,end,caption
train-0000,1,2,a clean clip' >"$d/ann720.csv"
$prep --annotations "$d/ann720.csv" --video-root "$v" --out "$d/out720" --chunk-sec 10 --short-side 720 \
	--entropy cabac >/dev/null 2>&1
$prep --verify "$d/out720/manifest" --deep >"$d/verify" || { cat "$d/verify"; fail "verify --deep of clean chunks"; }
chunk="$d/out720/train-0000/0.mp4"
idr=$(idr_last "$chunk" 5000) || fail "no keyframe of 5000 bytes or more in the 720p chunk"
zero "$chunk" $((idr + 1660))
set +e
$prep --verify "$d/out720/manifest" --deep >"$d/verify"
rc=$?
set -e
cat "$d/verify"
[ $rc = 1 ] || fail "verify --deep missed the zeroed block (exit $rc)"
grep -q "train-0000/0.mp4: frames* [0-9-]* decodes* with errors" "$d/verify" ||
	fail "verify --deep does not name the frames of the zeroed block"
echo "a zeroed block in slice data: the video is reported damaged, its clips dropped; verify --deep finds it"
