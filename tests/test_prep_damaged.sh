#!/usr/bin/env bash
# Damaged media is reported, never prepared silently: a source video with bursts of inverted
# bytes is chunked, its damaged frame spans are reported and every clip over them is dropped
# (exit 3), also after a resume; prep --verify --deep finds a burst in a chunk by decoding and
# a single flipped byte by the chunk's CRC-32 recorded when it was written.
set -eu
synth=tools/synth prep=tools/prep
[ -x $synth ] && [ -x $prep ] || { echo "skip: tools/synth or tools/prep not built (needs libav)"; exit 77; }
d=$(mktemp -d /tmp/test_prep_damaged_XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
$synth --out "$d/src" --videos 1 --heldout 0 --minutes 0.3 --size 160x96 --fps 10 >/dev/null
v="$d/src/videos"
cp "$v/train-0000.mp4" "$v/dmg.mp4"
size=$(stat -c %s "$v/dmg.mp4")
# flip FILE OFFSET COUNT MASK: XOR COUNT bytes at OFFSET with MASK, in place (coreutils only:
# a fresh machine has no python3)
flip() {
	local out="" b
	for b in $(od -An -v -tu1 -j "$2" -N "$3" "$1"); do out+=$(printf '\\%03o' $((b ^ $4))); done
	printf "$out" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# invert 16 bytes at 45% and 70% of the file (inside the video data)
burst() { flip "$1" "$2" 16 255; }
burst "$v/dmg.mp4" $((size * 45 / 100))
burst "$v/dmg.mp4" $((size * 70 / 100))
{
	echo 'video,start,end,caption'
	for s in 0 2 4 6 8 10 12 14 16; do echo "dmg,$s,$((s + 2)),clip at $s"; done
	echo 'train-0000,1,3,a clean clip'
} >"$d/ann.csv"
run_prep() {
	set +e
	$prep --annotations "$d/ann.csv" --video-root "$v" --out "$d/out" --chunk-sec 5 --short-side 96 2>"$d/log"
	rc=$?
	set -e
	[ $rc = 3 ] || { cat "$d/log"; fail "prep exit status $rc, want 3 (damaged frames dropped)"; }
}
run_prep
r="$d/out/prep-report.txt"
cat "$r"
grep -q "^video dmg: [0-9]* frames decode with errors (.*): frames [0-9]*-[0-9]* (.* s).*; clips overlapping them are dropped" "$r" ||
	fail "the damaged video and its frame spans are not reported"
ndrop=$(grep -c "^line [0-9]*: video dmg: .* overlaps frames [0-9]*-[0-9]* that decode with errors" "$r" || true)
[ "$ndrop" -ge 1 ] || fail "no clip over the damage was dropped"
[ "$ndrop" -lt 9 ] || fail "every clip of the damaged video was dropped: the clean parts should stay"
grep -q "summary: $((10 - ndrop)) samples, $ndrop dropped (.*$ndrop over damaged frames); 1 videos with damaged frames" "$r" ||
	fail "summary does not count the dropped clips"
# a resume keeps what it knew: the same spans and the same clips dropped
cp "$r" "$d/report1"
run_prep
diff <(grep -v summary "$d/report1") <(grep -v summary "$r") || fail "a resume reported the damage differently"
# --deep on the prepared chunks: clean
$prep --verify "$d/out/manifest" --deep >"$d/verify" || { cat "$d/verify"; fail "verify --deep of clean chunks"; }
grep -q "OK" "$d/verify" || fail "verify did not say OK"
chunk="$d/out/train-0000/0.mp4"
csize=$(stat -c %s "$chunk")
# one flipped byte that leaves the chunk decodable: only the CRC can see it
flip "$chunk" $((csize - 40)) 1 1
verify_finds() { # PATTERN WHAT: --verify --deep exits 1 and reports PATTERN
	set +e
	$prep --verify "$d/out/manifest" --deep >"$d/verify"
	local rc=$?
	set -e
	cat "$d/verify"
	[ $rc = 1 ] || fail "verify --deep missed $2 (exit $rc)"
	grep -q "$1" "$d/verify" || fail "$2 is not reported"
}
verify_finds "train-0000/0.mp4 changed since it was prepared (CRC-32" "a flipped byte"
# a burst in the chunk's frames: the strict decode names the frames
burst "$chunk" $((csize / 2))
verify_finds "train-0000/0.mp4: frames* [0-9-]* decodes* with errors" "a damaged chunk"
# preparing again re-encodes the changed chunk instead of keeping it
run_prep
$prep --verify "$d/out/manifest" --deep >"$d/verify" || { cat "$d/verify"; fail "the changed chunk was kept"; }
echo "damaged frames reported and cut out; verify --deep finds decode errors and changed bytes"
