#!/usr/bin/env bash
# Class labels end to end (issue 28 §1): tools/synth videos and a labels-csv made from their clips
# (two heads, class names through --classes) -> tools/prep (version 3 manifest; --info lists the
# heads) -> loaderd -> ring -> the trainer's ingest (tests/test_trainer_ingest_labels --read): every
# clip's labels are its CSV row's, on the host and the device, and the same positions carry the
# same labels with 1 and with 3 loader threads. prep refuses a class id past --num-classes and an
# unknown class name naming file:line, and reports a clip past its video's end (exit 3).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
rd=$BUILD/tests/test_trainer_ingest_labels
for b in tools/synth tools/prep tools/ringctl loaderd/loaderd "$rd"; do
	[ -x "$b" ] || { echo "skip: $b is not built"; exit 77; }
done
dir=$(mktemp -d /tmp/test_prep_labels_e2e_XXXXXX)
ring=t-labe2e-$$
pid=""
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	tools/ringctl destroy --ring "$ring" >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$dir/loaderd.log" ] && tail -n 20 "$dir/loaderd.log"; exit 1; }
tools/synth --out "$dir/src" --videos 2 --heldout 0 --minutes 0.5 >/dev/null 2>&1 || fail "synth"
printf 'jump\nwave\nsit\nrun\n' >"$dir/actions.txt"
printf 'red\ngreen\nblue\n' >"$dir/colours.txt"
# row i (from 0): action i % 4, colour i % 3, none every fifth row
awk -F, 'NR > 1 { i = NR - 2; split("jump wave sit run", a, " "); split("red green blue", c, " ");
	printf "%s,%s,%s,%s,%s\n", $1, $2, $3, a[i % 4 + 1], i % 5 == 4 ? "" : c[i % 3 + 1] }
	BEGIN { print "video,start,end,label,label2" }' "$dir/src/train.csv" >"$dir/labels.csv"
rows=$(($(wc -l <"$dir/labels.csv") - 1))
[ "$rows" -ge 6 ] || fail "only $rows clips from synth"
P=(tools/prep --format labels-csv --classes "$dir/actions.txt,$dir/colours.txt" --video-root "$dir/src/videos"
	--bpe tests/fixtures/bpe_tiny_merges.txt -j 2)
"${P[@]}" --annotations "$dir/labels.csv" --out "$dir/out" >"$dir/prep.log" 2>&1 || fail "prep exited $?: $(tail -3 "$dir/prep.log")"
tools/prep --info "$dir/out/manifest" >"$dir/info.txt" || fail "prep --info"
grep -q "version 3" "$dir/info.txt" || fail "not a version 3 manifest: $(head -1 "$dir/info.txt")"
grep -q "label head 0  label: 4 classes, $rows samples labelled, class names jump, wave, sit, ..." "$dir/info.txt" ||
	fail "--info head 0: $(grep 'label head' "$dir/info.txt")"
grep -q "label head 1  label2: 3 classes, $((rows - rows / 5)) samples labelled, class names red, green, blue" \
	"$dir/info.txt" || fail "--info head 1: $(grep 'label head' "$dir/info.txt")"

# the labels every sample should have: row i's class ids
awk -F, 'NR > 1 { i = NR - 2; printf "%d %d %d\n", i, i % 4, i % 5 == 4 ? -1 : i % 3 }' "$dir/src/train.csv" >"$dir/want.txt"
n=12
read_ring() { # $1: loader threads; the ingest's rows into $2
	tools/ringctl create --ring "$ring" --frames 2 --height 64 --width 64 --slots 16 --seed 7 --replace \
		>/dev/null 2>&1 || fail "ringctl create"
	loaderd/loaderd --ring "$ring" --manifest "$dir/out/manifest" --workers "$1" >"$dir/loaderd.log" 2>&1 &
	pid=$!
	timeout 120 "$rd" --read "$ring" "$n" >"$2" 2>"$dir/read.err" || fail "ingest: $(cat "$dir/read.err")"
	kill -TERM "$pid"
	wait "$pid"
	pid=""
	tools/ringctl destroy --ring "$ring" >/dev/null 2>&1
	[ "$(wc -l <"$2")" = "$n" ] || fail "$(wc -l <"$2") rows ingested, want $n"
	while read -r pos id l0 l1; do
		want=$(awk -v id="$id" '$1 == id { print $2, $3 }' "$dir/want.txt")
		[ "$l0 $l1" = "$want" ] || fail "position $pos sample $id: labels $l0 $l1, its CSV row says $want"
	done <"$2"
}
read_ring 1 "$dir/one.txt"
read_ring 3 "$dir/three.txt"
cmp -s "$dir/one.txt" "$dir/three.txt" || fail "1 and 3 loaders disagree: $(diff "$dir/one.txt" "$dir/three.txt" | head -4)"

# refusals through the command line: exit 1, file:line named
sed '3s/,[a-z]*,\([a-z]*\)$/,dance,\1/' "$dir/labels.csv" >"$dir/unknown.csv"
"${P[@]}" --annotations "$dir/unknown.csv" --out "$dir/o2" >"$dir/p2.log" 2>&1 && fail "an unknown class name was accepted"
grep -q "unknown.csv:3: unknown class name 'dance'" "$dir/p2.log" || fail "unknown name: $(tail -2 "$dir/p2.log")"
awk -F, 'NR == 1 { print "video,start,end,label"; next } { print $1 "," $2 "," $3 ",7" }' "$dir/src/train.csv" >"$dir/ids.csv"
tools/prep --format labels-csv --num-classes 4 --video-root "$dir/src/videos" --bpe tests/fixtures/bpe_tiny_merges.txt \
	--annotations "$dir/ids.csv" --out "$dir/o3" >"$dir/p3.log" 2>&1 && fail "class id 7 of 4 accepted"
grep -q "ids.csv:2: class id 7 of head 0 is outside its 4 classes" "$dir/p3.log" || fail "id range: $(tail -2 "$dir/p3.log")"
# a clip past its video's end: dropped and reported (prep knows the duration only once it has cut the video)
{ cat "$dir/labels.csv"; echo "train-0000,100,101,jump,red"; } >"$dir/late.csv"
"${P[@]}" --annotations "$dir/late.csv" --out "$dir/o4" >"$dir/p4.log" 2>&1
rc=$?
[ $rc = 3 ] || fail "a clip past the video's end: prep exited $rc, want 3"
grep -q "line $((rows + 2)): video train-0000: 100.00-101.00 s is outside the video" "$dir/o4/prep-report.txt" ||
	fail "late clip: $(cat "$dir/o4/prep-report.txt")"
echo "labels: CSV -> prep -> loaderd -> ring -> ingest, $n clips' labels equal at 1 and 3 loaders; bad labels refused"
