#!/usr/bin/env bash
# tools/prep --special-tokens: captions that spell a special token, with OpenAI's merges, get
# open_clip's ids by default (<end_of_text> is the end id 49407, <|endoftext|> ordinary pieces)
# and OpenAI's with --special-tokens openai (the other way round); read back as ids by clipdump.
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep tools/clipdump
jt_tmp prepspecial
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 1 --heldout 0 --minutes 0.25 --size 160x96 --fps 10 >/dev/null 2>&1 || fail "synth"
awk -F, 'NR == 1 { print; next } NR == 2 { print $1 "," $2 "," $3 ",a <|endoftext|> b"; next }
	NR == 3 { print $1 "," $2 "," $3 ",a <end_of_text> b"; next }' "$tmp/src/train.csv" >"$tmp/ann.csv"
ids() { # rule -> "sample<TAB>ids" lines, sorted by sample
	local out=$tmp/$1 flag=()
	[ "$1" = default ] || flag=(--special-tokens "$1")
	tools/prep --annotations "$tmp/ann.csv" --video-root "$tmp/src/videos" --out "$out" "${flag[@]}" \
		--bpe tests/fixtures/bpe_simple_vocab_16e6.txt.gz --short-side 96 -j 1 >"$tmp/prep-$1.log" 2>&1 ||
		fail "prep ${flag[*]}: $(tail -n 3 "$tmp/prep-$1.log")"
	rm -f "$out/bpe_merges.txt" # clipdump then prints the ids
	tools/clipdump --manifest "$out/manifest" --positions 0-1 --frames 1 --image-size 32 --out "$out/sheets" \
		>"$tmp/cd-$1.log" 2>&1 || fail "clipdump: $(tail -n 3 "$tmp/cd-$1.log")"
	sed -E 's/^.* sample ([0-9]+) .*TOKENS (.*)$/\1\t\2/' "$out/sheets/clips.txt" | sort
}
plain="49406 320 27 347 40786 4160 91 285 321 49407"         # a <| endoftext |> b
split="49406 320 283 806 318 539 318 4160 285 321 49407"     # a < end _ of _ text > b
special="49406 320 49407 321 49407"                          # a END b
want_openclip=$(printf '0\t%s\n1\t%s' "$plain" "$special")
want_openai=$(printf '0\t%s\n1\t%s' "$special" "$split")
[ "$(ids default)" = "$want_openclip" ] || fail "default rule: $(ids default), want $want_openclip"
[ "$(ids openclip)" = "$want_openclip" ] || fail "--special-tokens openclip: $(ids openclip)"
[ "$(ids openai)" = "$want_openai" ] || fail "--special-tokens openai: $(ids openai), want $want_openai"
tools/prep --annotations "$tmp/ann.csv" --video-root "$tmp/src/videos" --out "$tmp/bad" --special-tokens clip \
	>/dev/null 2>"$tmp/bad.log" && fail "--special-tokens clip accepted"
grep -q "openclip" "$tmp/bad.log" || fail "--special-tokens clip: the error does not name the choices: $(cat "$tmp/bad.log")"
echo "ok: prep tokenizes special-token spellings by the rule asked for"
