#!/usr/bin/env bash
# clipdump as a user runs it on a run: --run-dir takes the manifest and data seed from the run's
# launch.conf and frames and size from its checkpoint's model (the sheet equals the one made
# with those flags given by hand), the caption vocabulary is found next to the manifest, --grid
# puts several clips on one sheet, and UTF-8 captions are drawn with the real font (a missing
# font falls back to the bitmap font with a log line, and looks different).
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep tools/launch.sh tools/clipdump trainer/trainer loaderd/loaderd
jt_tmp clipdump
tmp=$JT_TMP
png_size() { # "W H" from the IHDR
	echo $((0x$(head -c 20 "$1" | tail -c 4 | od -An -tx1 | tr -d ' \n'))) $((0x$(head -c 24 "$1" | tail -c 4 | od -An -tx1 | tr -d ' \n')))
}
tools/synth --out "$tmp/src" --videos 1 --heldout 0 --minutes 0.3 --size 160x90 --scene-seed 2 >/dev/null 2>&1 || fail "synth"
# captions in several scripts
awk -F, 'BEGIN { split("café crème au lait|Ein Hund läuft über die Straße|Кошка сидит на окне|δύο πουλιά πετούν", c, "|") }
	NR == 1 { print; next } NR <= 9 { print $1 "," $2 "," $3 "," c[(NR - 2) % 4 + 1] }' "$tmp/src/train.csv" >"$tmp/u.csv"
tools/prep --annotations "$tmp/u.csv" --video-root "$tmp/src/videos" --out "$tmp/data" --short-side 90 \
	--train-bpe 600 >/dev/null 2>&1 || fail "prep"
tools/launch.sh 1 --manifest "$tmp/data/manifest" --run-dir "$tmp/run" --seed 7 -- --model tiny --image-size 48 --patch 16 \
	--frames 3 --batch-size 4 --steps 2 >"$tmp/launch.out" 2>&1 || fail "launch: $(tail -n 5 "$tmp/launch.out")"

tools/clipdump --run-dir "$tmp/run" --positions 0-4 --grid 5 --out "$tmp/a" 2>"$tmp/a.log" || fail "clipdump --run-dir: $(cat "$tmp/a.log")"
grep -q "the run's model: 3 frames of 48x48" "$tmp/a.log" || fail "the checkpoint's geometry was not used: $(cat "$tmp/a.log")"
[ "$(ls "$tmp/a" | grep png)" = grid0-4.png ] || fail "--grid 5 wrote $(ls "$tmp/a")"
read -r w h < <(png_size "$tmp/a/grid0-4.png")
[ "$w" -ge 144 ] && [ "$h" -gt $((5 * 48)) ] || fail "a grid of 5 clips of 3x48x48 is ${w}x$h"
tools/clipdump --manifest "$tmp/data/manifest" --bpe "$tmp/data/bpe_merges.txt" --seed 7 --frames 3 --image-size 48 \
	--positions 0-4 --grid 5 --out "$tmp/b" 2>/dev/null || fail "clipdump by hand"
cmp -s "$tmp/a/grid0-4.png" "$tmp/b/grid0-4.png" || fail "--run-dir differs from its manifest, seed 7, 3 frames, 48 px and vocabulary"
tools/clipdump --manifest "$tmp/data/manifest" --seed 1 --frames 3 --image-size 48 --positions 0-4 --grid 5 --out "$tmp/c" 2>/dev/null
cmp -s "$tmp/a/grid0-4.png" "$tmp/c/grid0-4.png" && fail "the run's data seed 7 was not used"

# one sheet per clip without --grid; the bitmap font when the real one is missing
tools/clipdump --run-dir "$tmp/run" --positions 0-1 --out "$tmp/d" 2>/dev/null || fail "clipdump per clip"
[ "$(ls "$tmp/d" | grep png | tr '\n' ' ')" = "pos0.png pos1.png " ] || fail "per-clip sheets: $(ls "$tmp/d")"
AVCLIP_FONT=/nonexistent tools/clipdump --run-dir "$tmp/run" --positions 0-4 --grid 5 --out "$tmp/e" 2>"$tmp/e.log" ||
	fail "clipdump without a font: $(cat "$tmp/e.log")"
grep -q "captions in the built-in bitmap font" "$tmp/e.log" || fail "no log line for the bitmap fallback"
if grep -q 'HAVE_FREETYPE := 1' "${BUILD:-build}/config.mk" && [ -r /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
	grep -q "bitmap font" "$tmp/a.log" && fail "FreeType and the font are here, yet the bitmap font was used"
	cmp -s "$tmp/a/grid0-4.png" "$tmp/e/grid0-4.png" && fail "the real font and the bitmap font drew the same sheet"
fi
out=$(tools/clipdump --run-dir "$tmp/run" --ring x --out "$tmp/f" 2>&1) && fail "--run-dir with --ring accepted"
echo "ok: --run-dir geometry, seed and vocabulary; a grid of 5; UTF-8 captions with a font, bitmap fallback logged"
