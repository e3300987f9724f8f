#!/usr/bin/env bash
# tools/eval's --bpe: the line of a merges file that does not load is named, as prep names it, and
# merges of another vocabulary than the manifest's are refused (prompts and captions would be other words).
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep tools/eval
jt_tmp evalbpe
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 0 --heldout 0 --images 4 --seed 2 >/dev/null 2>&1 || fail "synth"
tools/prep --shards "$tmp/src/shards" --out "$tmp/d" --train-bpe 600 >/dev/null 2>&1 || fail "prep"
printf '#version: 0.2\nd o\nbroken\n' >"$tmp/broken.txt"
vocab=$(tools/prep --info "$tmp/d/manifest" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p')
out=$(tools/eval --manifest "$tmp/d/manifest" --init-seed 1 --model tiny --vocab "$vocab" --classes-from action \
	--bpe "$tmp/broken.txt" --quiet 2>&1) && fail "eval used a broken merges file"
grep -q "BPE merges $tmp/broken.txt:3: a malformed line" <<<"$out" || fail "the line is not named: $out"
tools/prep --shards "$tmp/src/shards" --out "$tmp/b" --train-bpe 520 >/dev/null 2>&1 || fail "prep b"
out=$(tools/eval --manifest "$tmp/d/manifest" --init-seed 1 --model tiny --vocab "$vocab" --classes-from action \
	--bpe "$tmp/b/bpe_merges.txt" --quiet 2>&1) && fail "eval used merges of another vocabulary"
grep -q -- "--bpe $tmp/b/bpe_merges.txt is another vocabulary" <<<"$out" || fail "unclear: $out"
echo "ok: eval names the bad line of a merges file and refuses another vocabulary"
