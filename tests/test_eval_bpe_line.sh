#!/usr/bin/env bash
# tools/eval names the line of a merges file (--bpe) that does not load, as prep does.
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
echo "ok: eval names the bad line of a merges file"
