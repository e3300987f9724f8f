#!/usr/bin/env bash
# synth --world compose: images only (videos are refused, naming the fix); --heldout-images sets
# the held-out count; every caption is "a SIZE COLOUR SHAPE left of|above a SIZE COLOUR SHAPE" with
# one large and one small object; training never names a held-out (colour + 2 shape) % 5 == 0
# object, each held-out caption names one; the same seed gives the same shards.
set -eu
bin=tools/synth
[ -x $bin ] || { echo "skip: tools/synth not built (needs libav)"; exit 77; }
d=$(mktemp -d /tmp/test_synth_compose_XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
args="--world compose --videos 0 --heldout 0 --images 300 --heldout-images 120 --size 64x64 --shard-size 1000"
$bin --out "$d/a" $args 2>/dev/null
$bin --out "$d/b" $args 2>/dev/null
cmp "$d/a/shards/train-00000.tar" "$d/b/shards/train-00000.tar" || fail "the same seed gave other shards"
cmp "$d/a/shards/heldout-00000.tar" "$d/b/shards/heldout-00000.tar" || fail "the same seed gave other held-out shards"
if $bin --out "$d/c" --world compose --images 10 2>"$d/err"; then fail "compose with the default videos accepted"; fi
grep -q -- "--videos 0 --heldout 0" "$d/err" || fail "the refusal does not name the fix: $(cat "$d/err")"
for s in train heldout; do
	mkdir -p "$d/$s"
	tar xf "$d/a/shards/$s-00000.tar" -C "$d/$s"
	for f in "$d/$s"/*.txt; do cat "$f"; echo; done >"$d/$s.captions"
done
[ "$(wc -l <"$d/train.captions")" = 300 ] || fail "want 300 training images"
[ "$(wc -l <"$d/heldout.captions")" = 120 ] || fail "want 120 held-out images (--heldout-images)"
awk -v colours="red green blue yellow purple white orange cyan pink brown" \
	-v shapes="square circle triangle diamond cross ring" '
	BEGIN { nc = split(colours, C, " "); ns = split(shapes, S, " ")
		for (i = 1; i <= nc; i++) ci[C[i]] = i - 1
		for (i = 1; i <= ns; i++) si[S[i]] = i - 1 }
	{ rel = $5 == "left" ? $5 " " $6 : $5; o = $5 == "left" ? 7 : 6
	  if (NF != o + 3 || $1 != "a" || $(o) != "a" || !($3 in ci) || !($4 in si) || !($(o + 2) in ci) ||
	      !($(o + 3) in si) || (rel != "left of" && rel != "above") ||
	      !(($2 == "large" && $(o + 1) == "small") || ($2 == "small" && $(o + 1) == "large"))) {
		print "FAIL: caption \"" $0 "\""; bad = 1; next }
	  h = (ci[$3] + 2 * si[$4]) % 5 == 0 || (ci[$(o + 2)] + 2 * si[$(o + 3)]) % 5 == 0
	  if ((FILENAME ~ /heldout/) != h) { print "FAIL: \"" $0 "\" in " FILENAME; bad = 1 }
	  seen[FILENAME ~ /heldout/, rel]++ }
	END { if (!seen[0, "left of"] || !seen[0, "above"] || !seen[1, "left of"] || !seen[1, "above"]) {
		print "FAIL: a relation missing from a split"; bad = 1 }
	      exit bad }' "$d/train.captions" "$d/heldout.captions" || exit 1
echo "compose images: two objects, sizes and a relation; held-out objects only in held-out images"
