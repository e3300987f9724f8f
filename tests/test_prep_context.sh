#!/usr/bin/env bash
# tools/prep --context N: the manifest's captions get N tokens (a model of --ctx-len N then
# trains and evaluates on it); a longer caption is cut with its end token kept, a shorter one
# padded; N outside [2, 77] is refused naming the flag. Read back with prep --info and clipdump.
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep tools/clipdump
jt_tmp prepcontext
tmp=$JT_TMP
# captions "a <colour> <shape> on the left" and the like: 6 words, 8 tokens with start and end
tools/synth --out "$tmp/src" --world hard --videos 0 --heldout 0 --images 8 --size 64x64 >/dev/null 2>&1 || fail "synth"
for n in 6 16; do
	tools/prep --shards "$tmp/src/shards" --out "$tmp/c$n" --context $n --bpe tests/fixtures/bpe_simple_vocab_16e6.txt.gz \
		>"$tmp/prep$n.log" 2>&1 || fail "prep --context $n: $(tail -n 3 "$tmp/prep$n.log")"
	tools/prep --info "$tmp/c$n/manifest" >"$tmp/info$n" || fail "prep --info"
	grep -q "captions      context $n," "$tmp/info$n" || fail "--context $n: $(grep captions "$tmp/info$n")"
	rm -f "$tmp/c$n/bpe_merges.txt" # clipdump then prints the ids
	tools/clipdump --manifest "$tmp/c$n/manifest" --positions 0-1 --frames 1 --image-size 32 --out "$tmp/s$n" \
		>"$tmp/cd$n.log" 2>&1 || fail "clipdump: $(tail -n 3 "$tmp/cd$n.log")"
	sed -E 's/^.*TOKENS (.*)$/\1/' "$tmp/s$n/clips.txt" >"$tmp/ids$n"
done
grep -q "10 cut at the context" "$tmp/info6" || fail "--context 6 should cut all 10 captions (8 + 2 held out): $(grep captions "$tmp/info6")"
grep -q "0 cut at the context" "$tmp/info16" || fail "--context 16 should cut none: $(grep captions "$tmp/info16")"
# cut: the first 5 ids of the whole caption, then the end token
while read -r whole && read -r cut <&3; do
	want="$(echo "$whole" | cut -d' ' -f1-5) 49407"
	[ "$cut" = "$want" ] || fail "cut caption $cut, want $want"
	[ "$(echo "$whole" | wc -w)" = 8 ] && [ "${whole##* }" = 49407 ] || fail "whole caption $whole"
done <"$tmp/ids16" 3<"$tmp/ids6"
for bad in 1 78; do
	tools/prep --shards "$tmp/src/shards" --out "$tmp/bad" --context $bad >/dev/null 2>"$tmp/bad.log" &&
		fail "--context $bad accepted"
	grep -q -- "--context" "$tmp/bad.log" || fail "--context $bad: the error does not name the flag: $(cat "$tmp/bad.log")"
done
echo "ok: prep --context sets the captions' token count, cuts with the end token kept, refuses 1 and 78"
