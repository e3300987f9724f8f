#!/usr/bin/env bash
# synth --world hard --images N: every image caption is "a <colour> <shape> <third>"; training
# never captions a held-out (colour + 2 shape + 3 third) % 7 == 0 triple, held-out images caption
# only such triples, and each pair of a held-out triple occurs in training; the world is
# deterministic (same seed, same shards) and another world than basic gives other images.
set -eu
bin=tools/synth
[ -x $bin ] || { echo "skip: tools/synth not built (needs libav)"; exit 77; }
d=$(mktemp -d /tmp/test_synth_hard_XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
args="--videos 1 --heldout 1 --minutes 0.2 --size 160x96 --fps 10 --images 800 --shard-size 1000"
$bin --out "$d/a" --world hard $args 2>/dev/null
$bin --out "$d/b" --world hard $args 2>/dev/null
$bin --out "$d/basic" $args 2>/dev/null
cmp "$d/a/shards/train-00000.tar" "$d/b/shards/train-00000.tar" || fail "the same seed gave other hard shards"
cmp -s "$d/a/shards/train-00000.tar" "$d/basic/shards/train-00000.tar" && fail "hard and basic shards are the same"
for s in train heldout; do
	mkdir -p "$d/$s"
	tar xf "$d/a/shards/$s-00000.tar" -C "$d/$s"
	for f in "$d/$s"/*.txt; do cat "$f"; echo; done >"$d/$s.captions"
done
[ "$(wc -l <"$d/heldout.captions")" = 200 ] || fail "want 200 held-out images (N/4)"
awk -v colours="red green blue yellow purple white orange cyan pink brown" \
	-v shapes="square circle triangle diamond cross ring" '
	BEGIN { nc = split(colours, C, " "); ns = split(shapes, S, " ")
		for (i = 1; i <= nc; i++) ci[C[i]] = i - 1
		for (i = 1; i <= ns; i++) si[S[i]] = i - 1
		w["on the left"] = 0; w["in the middle"] = 1; w["on the right"] = 2 }
	{ split($0, f, " "); third = f[4] " " f[5] " " f[6]
	  if ($1 != "a" || !(f[2] in ci) || !(f[3] in si) || !(third in w)) { print "FAIL: caption \"" $0 "\""; bad = 1; next }
	  h = (ci[f[2]] + 2 * si[f[3]] + 3 * w[third]) % 7 == 0
	  if (FILENAME ~ /heldout/) { if (!h) { print "FAIL: held-out caption of a seen triple: " $0; bad = 1 }
		HC[f[2] " " f[3]] = 1; HT[f[2] " " third] = 1; HS[f[3] " " third] = 1 }
	  else { if (h) { print "FAIL: training caption of a held-out triple: " $0; bad = 1 }
		TC[f[2] " " f[3]] = 1; TT[f[2] " " third] = 1; TS[f[3] " " third] = 1 } }
	END { for (k in HC) if (!(k in TC)) { print "FAIL: pair \"" k "\" never in training"; bad = 1 }
	      for (k in HT) if (!(k in TT)) { print "FAIL: pair \"" k "\" never in training"; bad = 1 }
	      for (k in HS) if (!(k in TS)) { print "FAIL: pair \"" k "\" never in training"; bad = 1 }
	      exit bad }' "$d/train.captions" "$d/heldout.captions" || exit 1
echo "hard images: captions name three things, the held-out triples are new and their pairs are not"
