#!/usr/bin/env bash
# tools/synth --write-labels: DIR/{train,heldout}-labels.csv hold one row per caption row (same video,
# start, end; label = the caption's action, label2 its shape), the class files list synth's whole
# vocabulary, and tools/prep --format labels-csv --classes takes them (77 without prep or libav).
set -u
cd "$(dirname "$0")/.."
for p in tools/synth tools/prep; do
	[ -x $p ] || { echo "skip: $p not built (needs libav)"; exit 77; }
done
D=$(mktemp -d /tmp/avclip-synth-labels.XXXXXX)
trap 'rm -rf "$D"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
tools/synth --out "$D/s" --videos 2 --heldout 1 --minutes 0.2 --write-labels >/dev/null 2>&1 || fail synth
[ "$(wc -l <"$D/s/classes-action.txt")" = 12 ] && [ "$(wc -l <"$D/s/classes-object.txt")" = 6 ] ||
	fail "class files: $(wc -l "$D"/s/classes-*.txt)"
for split in train heldout; do
	[ "$(head -1 "$D/s/$split-labels.csv")" = "video,start,end,label,label2" ] || fail "$split: no header"
	# the caption "a COLOUR SHAPE ACTION...": the row it implies, against the labels CSV's
	awk -F, 'NR > 1 { n = split($4, w, " "); a = w[4]; for (i = 5; i <= n; i++) a = a " " w[i]
		printf "%s,%s,%s,%s,%s\n", $1, $2, $3, a, w[3] }' "$D/s/$split.csv" >"$D/want"
	tail -n +2 "$D/s/$split-labels.csv" | cmp -s - "$D/want" ||
		fail "$split-labels.csv differs from $split.csv's captions: $(tail -n +2 "$D/s/$split-labels.csv" | diff - "$D/want" | head -4)"
	[ -s "$D/want" ] || fail "$split: no rows"
	cut -d, -f4 "$D/want" | sort -u | grep -vxFf "$D/s/classes-action.txt" && fail "$split: an action outside the classes"
	cut -d, -f5 "$D/want" | sort -u | grep -vxFf "$D/s/classes-object.txt" && fail "$split: a shape outside the classes"
	tools/prep --format labels-csv --classes "$D/s/classes-action.txt,$D/s/classes-object.txt" \
		--video-root "$D/s/videos" --bpe tests/fixtures/bpe_tiny_merges.txt -j 2 \
		--annotations "$D/s/$split-labels.csv" --out "$D/$split" >"$D/prep.log" 2>&1 ||
		fail "prep $split: $(tail -3 "$D/prep.log")"
done
echo "synth --write-labels: labels CSVs match the captions row for row, prep takes them with the class files"
