#!/usr/bin/env bash
# prep --shards decodes every image before indexing it: a truncated PNG and a 7-byte non-image
# .jpg among good images are one report line each and counted, prep exits 3, and the manifest
# holds the good images only; --no-check-images indexes all of them (exit 0) as before.
set -eu
synth=tools/synth prep=tools/prep
[ -x $synth ] && [ -x $prep ] || { echo "tools/synth or tools/prep not built (needs libav)"; exit 77; }
d=$(mktemp -d /tmp/test_prep_shards_damaged_XXXXXX)
trap 'rm -rf "$d"' EXIT
$synth --out "$d/src" --videos 0 --heldout 0 --images 4 --shard-size 100 2>/dev/null
mkdir -p "$d/m" "$d/shards"
tar -xf "$d/src/shards/train-00000.tar" -C "$d/m"
cd "$d/m"
png=$(ls 00000000.png)
head -c $(($(stat -c %s "$png") / 2)) "$png" > cut.png
echo 'a cut-short image' > cut.txt
printf 'notajpg' > junk.jpg
echo 'seven bytes of text' > junk.txt
tar --format=ustar -cf "$d/shards/mixed.tar" 00000000.png 00000000.txt cut.png cut.txt 00000001.png 00000001.txt \
	junk.jpg junk.txt 00000002.png 00000002.txt 00000003.png 00000003.txt
cd - > /dev/null
set +e
$prep --shards "$d/shards" --out "$d/out" --train-bpe 600 2>"$d/log"
rc=$?
set -e
r="$d/out/prep-report.txt"
cat "$r"
[ $rc = 3 ] || { cat "$d/log"; echo "FAIL: exit status $rc with two damaged images, want 3"; exit 1; }
grep -q 'mixed.tar: key cut: .*does not decode cleanly.*; dropped' "$r" || { echo "FAIL: the truncated PNG is not reported"; exit 1; }
grep -q 'mixed.tar: key junk: not a JPEG, PNG or WebP image.*; dropped' "$r" || { echo "FAIL: the 7-byte .jpg is not reported"; exit 1; }
grep -q 'summary: 4 samples, 2 dropped (.*0 bad record, 2 damaged images, 0 over damaged frames)' "$r" || { echo "FAIL: the summary does not count the damaged images"; exit 1; }
$prep --verify "$d/out/manifest"
$prep --info "$d/out/manifest" | grep -q 'samples *4 ' || { echo "FAIL: the manifest does not hold the 4 good images"; exit 1; }
$prep --shards "$d/shards" --out "$d/out-nocheck" --train-bpe 600 --no-check-images 2>/dev/null ||
	{ echo "FAIL: --no-check-images: exit $?, want 0"; exit 1; }
$prep --info "$d/out-nocheck/manifest" | grep -q 'samples *6 ' || { echo "FAIL: --no-check-images does not index all 6"; exit 1; }
echo "damaged images reported, counted and left out; --no-check-images indexes them"
