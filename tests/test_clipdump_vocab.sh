#!/usr/bin/env bash
# clipdump refuses a --bpe of another vocabulary than the manifest's (its captions would be
# decoded into other words on the sheets), and decodes with the right one.
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep tools/clipdump
jt_tmp clipvocab
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 0 --heldout 0 --images 4 --seed 2 >/dev/null 2>&1 || fail "synth"
tools/prep --shards "$tmp/src/shards" --out "$tmp/a" --train-bpe 600 >/dev/null 2>&1 || fail "prep a"
tools/prep --shards "$tmp/src/shards" --out "$tmp/b" --train-bpe 520 >/dev/null 2>&1 || fail "prep b"
out=$(tools/clipdump --manifest "$tmp/a/manifest" --bpe "$tmp/b/bpe_merges.txt" --positions 0-1 --frames 1 \
	--image-size 32 --out "$tmp/sheets-b" 2>&1) && fail "clipdump decoded with another vocabulary"
grep -q -- "--bpe $tmp/b/bpe_merges.txt is another vocabulary" <<<"$out" || fail "unclear: $out"
tools/clipdump --manifest "$tmp/a/manifest" --bpe "$tmp/a/bpe_merges.txt" --positions 0-1 --frames 1 --image-size 32 \
	--out "$tmp/sheets-a" >"$tmp/a.log" 2>&1 || fail "clipdump with the manifest's vocabulary: $(tail -n 3 "$tmp/a.log")"
echo "ok: clipdump refuses another vocabulary"
