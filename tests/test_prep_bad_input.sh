#!/usr/bin/env bash
# Every bad input is one line in the report, counted, and the rest still prepared; the
# exit status says something was dropped: zero-length, corrupt, truncated and missing
# videos, invalid UTF-8, unparsable and reversed times, a short record, a range past the end;
# a video id naming a sub-folder is fine.
set -eu
synth=tools/synth prep=tools/prep
[ -x $synth ] && [ -x $prep ] || { echo "tools/synth or tools/prep not built (needs libav)"; exit 77; }
d=$(mktemp -d /tmp/test_prep_bad_XXXXXX)
trap 'rm -rf "$d"' EXIT
$synth --out "$d/src" --videos 1 --heldout 0 --minutes 0.2 --size 160x96 --fps 10
v="$d/src/videos"
mkdir -p "$v/sub"
cp "$v/train-0000.mp4" "$v/sub/nested.mp4"
: > "$v/empty.mp4"
head -c 50000 /dev/urandom > "$v/corrupt.mp4"
head -c $(($(stat -c %s "$v/train-0000.mp4") / 2)) "$v/train-0000.mp4" > "$v/truncated.mp4"
{
	echo 'video,start,end,caption'
	echo 'train-0000,1.0,2.0,a red square moves left'
	echo 'train-0000,2.0,3.5,"a caption, with a comma"'
	echo 'empty,0,1,zero-length video'
	echo 'corrupt,0,1,random bytes'
	echo 'truncated,0,1,cut short'
	echo 'missing,0,1,no such file'
	echo 'train-0000,100,101,past the end'
	printf 'train-0000,1,2,bad \xff byte\n'
	echo 'train-0000,abc,2,bad time'
	echo 'train-0000,3,2,reversed'
	echo 'too,few'
	echo 'sub/nested,0.5,1.5,an id naming a sub-folder'
	echo 'train-0000,nan,2,a NaN start'
	echo 'train-0000,1,inf,an infinite end'
} > "$d/ann.csv"
set +e
$prep --annotations "$d/ann.csv" --video-root "$v" --out "$d/out" --chunk-sec 5 --short-side 96
rc=$?
set -e
[ $rc = 3 ] || { echo "FAIL: exit status $rc, want 3 (something dropped)"; exit 1; }
r="$d/out/prep-report.txt"
cat "$r"
expect() { grep -q -- "$1" "$r" || { echo "FAIL: report lacks: $1"; exit 1; }; }
expect 'video empty: cannot open'
expect 'video corrupt: '
expect 'video truncated: '
expect 'video missing: not found'
expect 'line 8: video train-0000: 100.00-101.00 s is outside the video'
expect 'line 9: video .train-0000.: caption is not valid UTF-8'
expect "line 10: timestamps 'abc'"
expect 'line 11: video train-0000: bad time range'
expect 'line 12: 2 fields'
expect "line 14: timestamps 'nan', '2' are not finite times"
expect "line 15: timestamps '1', 'inf' are not finite times"
expect 'summary: 3 samples, 11 dropped (4 bad video, 1 invalid UTF-8, 4 bad time, 1 outside the video, 1 bad record, 0 damaged images, 0 over damaged frames)'
[ "$(grep -c . "$r")" = 12 ] || { echo "FAIL: want 11 problem lines and a summary"; exit 1; }
for bad in empty corrupt truncated missing; do
	[ -e "$d/out/$bad" ] && { echo "FAIL: the rejected video $bad left a folder behind"; exit 1; }
done
# nothing to prepare is a report line and exit 3, not an empty success: an empty annotation
# file, a header alone, an empty tar shard and a folder without shards
: > "$d/empty.csv"
echo 'video,start,end,caption' > "$d/header.csv"
for ann in empty header; do
	set +e
	$prep --annotations "$d/$ann.csv" --video-root "$v" --out "$d/out-$ann" 2>/dev/null
	rc=$?
	set -e
	[ $rc = 3 ] || { echo "FAIL: $ann.csv: exit status $rc, want 3"; exit 1; }
	grep -q "$ann.csv: .*\(empty\|no annotation records\)" "$d/out-$ann/prep-report.txt" || { echo "FAIL: $ann.csv not reported"; exit 1; }
done
mkdir -p "$d/shards" "$d/noshards"
: > "$d/shards/empty.tar"
set +e
$prep --shards "$d/shards" --out "$d/out-tar" 2>/dev/null
rc=$?
$prep --shards "$d/noshards" --out "$d/out-notar" 2>/dev/null
rc2=$?
set -e
[ $rc = 3 ] && [ $rc2 = 3 ] || { echo "FAIL: empty shard / no shards: exit $rc / $rc2, want 3"; exit 1; }
grep -q "empty.tar: no image with a caption in this shard (empty file)" "$d/out-tar/prep-report.txt" || { echo "FAIL: empty tar not reported"; exit 1; }
grep -q "no .tar files" "$d/out-notar/prep-report.txt" || { echo "FAIL: missing shards not reported"; exit 1; }
$prep --verify "$d/out/manifest"
$prep --info "$d/out/manifest" | grep -q 'samples       3 '
[ -f "$d/out/sub/nested/0.mp4" ] || { echo "FAIL: nested id not chunked into sub/nested/"; exit 1; }
echo "every bad input reported and counted; the good clips prepared"
