#!/usr/bin/env bash
# The special-token rules against the live references: open_clip's SimpleTokenizer for the default
# rule, tests/fixtures/bpe_reference.py openai (OpenAI CLIP's algorithm) for --special-tokens openai,
# on captions that hold either rule's spelling. Needs open_clip, ftfy and regex: skips (77) without.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
bin=$BUILD/tests/test_bpe_specials
[ -x "$bin" ] || { echo "skip: $bin is not built"; exit 77; }
. tests/python_env.sh
need_python open_clip ftfy regex
d=$(mktemp -d /tmp/test_bpe_specials_ref.XXXXXX)
trap 'rm -rf "$d"' EXIT
cat >"$d/caps" <<'CAPS'
a <|endoftext|> b
a <end_of_text> b
<start_of_text>x<END_OF_TEXT>
<|startoftext|>dog<|endoftext|>
the <|startoftext|> end <|end_of_text|> <end_of_text|>
<start_of_text><end_of_text><START_OF_TEXT>
CAPS
"$bin" --print openclip <"$d/caps" >"$d/c_openclip" || { echo "FAIL: tokenizing (open_clip's rule)"; exit 1; }
"$bin" --print openai <"$d/caps" >"$d/c_openai" || { echo "FAIL: tokenizing (OpenAI's rule)"; exit 1; }
"$py" - "$d/caps" >"$d/ref_openclip" <<'PY' || { echo "FAIL: open_clip"; exit 1; }
import sys
from open_clip.tokenizer import SimpleTokenizer
t = SimpleTokenizer()
for line in open(sys.argv[1], encoding="utf-8").read().split("\n"):
    if line:
        row = t([line], context_length=77)[0].tolist()
        while row and row[-1] == 0:
            row.pop()
        print(" ".join(map(str, row)) + "\t" + line)
PY
zcat tests/fixtures/bpe_simple_vocab_16e6.txt.gz >"$d/merges"
"$py" tests/fixtures/bpe_reference.py "$d/merges" openai <"$d/caps" >"$d/ref_openai" || { echo "FAIL: bpe_reference.py"; exit 1; }
rc=0
for r in openclip openai; do
	if ! diff "$d/ref_$r" "$d/c_$r"; then
		echo "FAIL: the $r rule differs from its reference (< reference, > bpe_tokenize)"
		rc=1
	fi
done
[ $rc = 0 ] && echo "both special-token rules give the references' ids on $(wc -l <"$d/caps") captions"
exit $rc
