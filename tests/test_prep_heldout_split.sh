#!/usr/bin/env bash
# The README's held-out split from the training chunks: a second annotation file over the same
# videos, prepared into the training ROOT with --manifest-out ROOT/heldout.manifest, encodes no
# frame again, leaves the training report and vocabulary alone (it reuses the vocabulary), and
# tools/eval finds that vocabulary next to the manifest. A held-out ROOT of its own prepared
# with --bpe gets a copy of the merges, so eval finds them there too. The progress line says
# "frames encoded" (0 when every chunk exists), never "ETA 0:00:00" (on a terminal the first
# line comes before any frame is done), and ends with "done in".
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep tools/eval
jt_tmp split
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 2 --heldout 1 --minutes 1 --size 320x180 --scene-seed 4 >/dev/null 2>&1 || fail "synth"
# the training annotations split in two over the same videos
{ head -n 1 "$tmp/src/train.csv"; sed -n '2~2p' "$tmp/src/train.csv"; } >"$tmp/a.csv"
{ head -n 1 "$tmp/src/train.csv"; sed -n '3~2p' "$tmp/src/train.csv"; } >"$tmp/b.csv"
grep -q '^video,' "$tmp/src/train.csv" || fail "synth's CSV has no header line"

# on a terminal (script gives prep a pty), progress lines come every second
script -q -e -c "tools/prep --annotations $tmp/a.csv --video-root $tmp/src/videos --out $tmp/data -j 1 --train-bpe 600" \
	/dev/null >"$tmp/first.out" 2>&1 || fail "prep a: $(tail -c 300 "$tmp/first.out")"
progress=$(tr '\r' '\n' <"$tmp/first.out" | grep '^prep: ')
[ "$(wc -l <<<"$progress")" -ge 2 ] || fail "expected progress lines before the end: $progress"
grep -q "ETA 0:00:00" <<<"$progress" && fail "a progress line says ETA 0:00:00: $progress"
head -n 1 <<<"$progress" | grep -qE "0/2 videos \([0-9]+%\), .* (ETA unknown until frames are done|ETA [0-9]+:[0-9]{2}:[0-9]{2})" || fail "first line: $(head -n 1 <<<"$progress")"
tail -n 1 <<<"$progress" | grep -q "2/2 videos (100%), [1-9][0-9]* frames encoded, .* done in 0:00:" || fail "last line: $(tail -n 1 <<<"$progress")"

report=$(md5sum <"$tmp/data/prep-report.txt")
merges=$(md5sum <"$tmp/data/bpe_merges.txt")
tools/prep --annotations "$tmp/b.csv" --video-root "$tmp/src/videos" --out "$tmp/data" \
	--manifest-out "$tmp/data/heldout.manifest" >"$tmp/second.out" 2>&1 || fail "prep b: $(tail -n 3 "$tmp/second.out")"
grep -q "2/2 videos (100%), 0 frames encoded" "$tmp/second.out" || fail "the held-out split encoded again: $(grep '^prep:' "$tmp/second.out")"
grep -q "using the vocabulary in $tmp/data/bpe_merges.txt" "$tmp/second.out" || fail "the vocabulary was not reused"
[ "$(md5sum <"$tmp/data/prep-report.txt")" = "$report" ] || fail "the training report was overwritten"
[ "$(md5sum <"$tmp/data/bpe_merges.txt")" = "$merges" ] || fail "the training vocabulary was overwritten"
[ -s "$tmp/data/heldout-report.txt" ] || fail "no report of its own for the held-out split"
tools/prep --verify "$tmp/data/heldout.manifest" >/dev/null || fail "the held-out manifest does not verify"
vocab=$(tools/prep --info "$tmp/data/manifest" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p')
tools/eval --manifest "$tmp/data/heldout.manifest" --init-seed 1 --model tiny --vocab "$vocab" --classes-from action \
	--json >"$tmp/eval1.json" 2>"$tmp/eval1.err" || fail "eval of the split: $(tail -n 2 "$tmp/eval1.err")"
grep -q '"zs_top1"' "$tmp/eval1.json" || fail "no zero-shot result: $(cat "$tmp/eval1.json")"

# a held-out ROOT of its own, tokenized with the training vocabulary: eval finds the copy
tools/prep --annotations "$tmp/src/heldout.csv" --video-root "$tmp/src/videos" --out "$tmp/heldout" \
	--bpe "$tmp/data/bpe_merges.txt" >"$tmp/third.out" 2>&1 || fail "prep heldout: $(tail -n 3 "$tmp/third.out")"
cmp -s "$tmp/heldout/bpe_merges.txt" "$tmp/data/bpe_merges.txt" || fail "no copy of the merges next to the held-out manifest"
tools/eval --manifest "$tmp/heldout/manifest" --init-seed 1 --model tiny --vocab "$vocab" --classes-from action \
	--json >"$tmp/eval2.json" 2>"$tmp/eval2.err" || fail "eval of the held-out ROOT: $(tail -n 2 "$tmp/eval2.err")"
# a different vocabulary next to a manifest is refused
printf '#version: 0.2\n' >"$tmp/other.txt"
out=$(tools/prep --annotations "$tmp/src/heldout.csv" --video-root "$tmp/src/videos" --out "$tmp/heldout" \
	--bpe "$tmp/other.txt" 2>&1) && fail "a second vocabulary next to the manifest was accepted"
grep -q "holds another vocabulary" <<<"$out" || fail "unclear refusal: $out"
echo "ok: the split reused chunks, report and vocabulary; eval found the merges in both layouts"
