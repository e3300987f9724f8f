#!/usr/bin/env bash
# Tiny caption sets prepare: one caption, two identical ones, one character, punctuation only
# (their vocabulary has no merge, only the bytes) each train a vocabulary that loads, write a
# manifest, and a rerun that reuses ROOT/bpe_merges.txt succeeds. A merges file that does not load
# is named with its line and the way out (today: "see its line number" and no number).
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep
jt_tmp tiny
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 0 --heldout 0 --images 1 --seed 2 >/dev/null 2>&1 || fail "synth"
mkdir -p "$tmp/one" && tar -xf "$tmp/src/shards/train-00000.tar" -C "$tmp/one" || fail "untar"
png=$(ls "$tmp"/one/*.png | head -n 1)
[ -f "$png" ] || fail "synth made no png"
n=0
for caps in "a dog runs" "same caption|same caption" "x" "!!!" "ünï|ünï"; do
	n=$((n + 1))
	d=$tmp/set$n
	mkdir -p "$d/m" "$d/shards"
	IFS='|' read -r -a list <<<"$caps"
	for k in "${!list[@]}"; do
		cp "$png" "$d/m/k$k.png"
		printf '%s' "${list[$k]}" >"$d/m/k$k.txt"
	done
	(cd "$d/m" && tar -cf "$d/shards/s-00000.tar" ./*) || fail "tar"
	tools/prep --shards "$d/shards" --out "$d/out" >"$d/first.log" 2>&1 || fail "prep of '$caps': $(tail -n 2 "$d/first.log")"
	grep -q "trained a BPE vocabulary" "$d/first.log" || fail "'$caps': no vocabulary trained: $(tail -n 2 "$d/first.log")"
	tools/prep --info "$d/out/manifest" | grep -q "^samples *${#list[@]} " || fail "'$caps': the manifest lacks its samples"
	tools/prep --shards "$d/shards" --out "$d/out" >"$d/second.log" 2>&1 || fail "rerun of '$caps': $(tail -n 2 "$d/second.log")"
	grep -q "using the vocabulary in $d/out/bpe_merges.txt" "$d/second.log" || fail "'$caps': the rerun did not reuse the vocabulary"
done
# a merges file that does not load: its line, and what to do
d=$tmp/set1
printf '#version: 0.2\nd o\nbroken\n' >"$d/out/bpe_merges.txt"
out=$(tools/prep --shards "$d/shards" --out "$d/out" 2>&1) && fail "a broken ROOT/bpe_merges.txt was used"
grep -q "$d/out/bpe_merges.txt:3: malformed line" <<<"$out" || fail "the line is not named: $out"
grep -q "remove it (or pass --train-bpe N)" <<<"$out" || fail "no way out: $out"
out=$(tools/prep --shards "$d/shards" --out "$d/out2" --bpe "$d/out/bpe_merges.txt" 2>&1) && fail "a broken --bpe was used"
grep -q -- "--bpe $d/out/bpe_merges.txt:3: malformed line" <<<"$out" || fail "--bpe: the line is not named: $out"
echo "ok: 1-2 captions, one character and punctuation prepare and rerun; a bad merges line is named"
