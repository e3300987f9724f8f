#!/usr/bin/env bash
# synth -> prep -> verify from nothing; a second run reuses every chunk and writes the same
# manifest; a run killed midway, or with a chunk and a done marker deleted, resumes to
# byte-identical output; image shards index too.
set -eu
synth=tools/synth prep=tools/prep
[ -x $synth ] && [ -x $prep ] || { echo "tools/synth or tools/prep not built (needs libav)"; exit 77; }
d=$(mktemp -d /tmp/test_prep_pipeline_XXXXXX)
trap 'rm -rf "$d"' EXIT
$synth --out "$d/src" --videos 3 --heldout 1 --minutes 0.25 --size 160x96 --fps 10 --images 25 --shard-size 10
args="--annotations $d/src/train.csv --video-root $d/src/videos --chunk-sec 4 --short-side 96 -j 2"
$prep $args --out "$d/a"
$prep --verify "$d/a/manifest" --deep
$prep --info "$d/a/manifest" | tee "$d/info"
grep -q '^videos        3 ' "$d/info"
grep -q 'crossing a chunk boundary' "$d/info"
snap() { (cd "$1" && find . -type f ! -name prep-report.txt | sort | xargs md5sum); }
snap "$d/a" > "$d/full.md5"
grep -q 'train-0000/0.mp4' "$d/full.md5"
grep -q 'train-0002/12.mp4' "$d/full.md5"

# second run: nothing re-encoded (chunk files untouched), same manifest
touch "$d/stamp"
sleep 1
$prep $args --out "$d/a"
[ -z "$(find "$d/a" -name '*.mp4' -newer "$d/stamp")" ] || { echo "FAIL: a finished chunk was rewritten"; exit 1; }
snap "$d/a" | diff "$d/full.md5" -

# a chunk and its video's done marker gone: that chunk comes back identical
rm "$d/a/train-0001/4.mp4" "$d/a/train-0001/.done"
$prep $args --out "$d/a"
snap "$d/a" | diff "$d/full.md5" -

# killed midway (whenever the kill lands), then resumed: identical to the full run
$prep $args -j 1 --out "$d/b" & pid=$!
sleep 0.3
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
# a kill during the manifest's write leaves manifest.tmp.<pid>: one of a dead writer is made here,
# whenever the kill above landed, and the resume must remove it
mkdir -p "$d/b"; sh -c 'echo $$ >"$1"' _ "$d/deadpid"
echo partial >"$d/b/manifest.tmp.$(cat "$d/deadpid")"
$prep $args --out "$d/b"
[ -z "$(find "$d/b" -name 'manifest.tmp.*')" ] || { echo "FAIL: a dead writer's manifest temp file is left"; exit 1; }
snap "$d/b" | diff "$d/full.md5" -
[ -z "$(find "$d/b" -name '*.part')" ] || { echo "FAIL: temp files left behind"; exit 1; }

# other encoding settings into the same root: the chunks are made again, not reused
$prep $args --out "$d/b" --gop 8
if snap "$d/b" | diff -q "$d/full.md5" - >/dev/null; then echo "FAIL: --gop 8 reused chunks of the default GOP"; exit 1; fi
grep -q 'gop=8' "$d/b/train-0000/.done"
$prep --verify "$d/b/manifest" --deep
$prep --info "$d/b/manifest" | grep -Eq 'keyframes each, ([0-9]+) with a packet index' || { echo "FAIL: no packet index"; exit 1; }
chunks=$($prep --info "$d/b/manifest" | sed -n 's/^chunks *\([0-9]*\) of.*/\1/p')
$prep --info "$d/b/manifest" | grep -q "$chunks with a packet index" || { echo "FAIL: a chunk of prep's lacks a packet index"; exit 1; }

# settings that leave the GOP as it was (--deblock, --b-runs): no chunk made with the other value is
# kept (a kept chunk is checked against the GOP only), and going back gives the first bytes again
chunks() { (cd "$1" && find . -name '*.mp4' | sort | xargs md5sum); }
for flag in "--deblock on:off" "--b-runs fixed:adaptive"; do
	name=${flag%% *} vals=${flag#* }
	$prep $args --out "$d/b" --gop 8 $name ${vals%%:*}
	chunks "$d/b" >"$d/one.md5"
	$prep $args --out "$d/b" --gop 8 $name ${vals##*:}
	chunks "$d/b" >"$d/two.md5"
	same=$(cut -d' ' -f1 "$d/one.md5" | grep -cFf - "$d/two.md5" || true)
	[ "$same" = 0 ] || { echo "FAIL: $name ${vals##*:} kept $same chunks made with ${vals%%:*}"; exit 1; }
	$prep $args --out "$d/b" --gop 8 $name ${vals%%:*}
	chunks "$d/b" | diff "$d/one.md5" - || { echo "FAIL: $name ${vals%%:*} again gave other bytes"; exit 1; }
done
$prep $args --out "$d/b" --gop 8 --deblock off --b-runs fixed
grep -q 'gop=8 .*b_runs=fixed deblock=off' "$d/b/train-0000/.done" || { echo "FAIL: the done marker lacks the settings"; exit 1; }
$prep --verify "$d/b/manifest" --deep

# an OpenAI-format merges file instead of a trained vocabulary
$prep $args --out "$d/c" --bpe tests/fixtures/bpe_corpus_merges.txt
$prep --info "$d/c/manifest" | grep -q 'vocabulary 2514'
# (a copy of it lands next to the manifest, for eval; nothing is trained)
cmp -s "$d/c/bpe_merges.txt" tests/fixtures/bpe_corpus_merges.txt || { echo "FAIL: trained a vocabulary although --bpe was given"; exit 1; }

# image-text shards
$prep --shards "$d/src/shards" --out "$d/img"
$prep --verify "$d/img/manifest"
$prep --info "$d/img/manifest" | grep -q 'tar shards    4'
$prep --info "$d/img/manifest" | grep -q '31 images'
# --verify reports problems and never crashes: a missing chunk, a corrupt manifest
rm "$d/a/train-0002/0.mp4"
if $prep --verify "$d/a/manifest" > "$d/v1"; then echo "FAIL: missing chunk not found"; exit 1; fi
grep -q 'train-0002/0.mp4 is missing' "$d/v1"
printf 'XXXX' | dd of="$d/a/manifest" bs=1 seek=0 conv=notrunc 2>/dev/null
if $prep --verify "$d/a/manifest" > "$d/v2"; then echo "FAIL: corrupt manifest verified"; exit 1; fi
grep -q 'not a manifest' "$d/v2"
if $prep --info "$d/a/manifest" > "$d/v3"; then echo "FAIL: --info of a corrupt manifest succeeded"; exit 1; fi
echo "pipeline, resume, shard indexing and verify OK"
