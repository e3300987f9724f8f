#!/usr/bin/env bash
# trainer --init-from: a run starts from open_clip-named weights (a run's checkpoint through
# tools/export, as a CLIP file would come) and trains; projections of another width are named and
# refused, then kept at their initial values with --init-skip-mismatched; a head count that
# disagrees with the file's metadata is named.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
[ -x tools/export ] || { echo "skip: tools/export is not built"; exit 77; }
run() { # run NAME RUNDIR [flags...]: one trainer on a fresh ring, 3 steps
	local ring=$TT_TAG-$1 dir=$2 log=$TT_DIR/$1.log
	shift 2
	tt_ring "$ring" 1 5
	tt_feeder "$ring"
	"$TRAINER" --ring "$ring" "${TT_MODEL[@]}" "${TT_DATA[@]}" --loss fastclip-v3 --batch-size 4 --steps 3 \
		--run-dir "$dir" "$@" 2>"$log"
}
run src "$TT_DIR/src" --init-seed 5 || fail "the source run failed: $(tail -n 2 "$TT_DIR/src.log")"
tools/export "$TT_DIR/src" --out "$TT_DIR/clip.safetensors" 2>"$TT_DIR/export.log" ||
	fail "tools/export: $(cat "$TT_DIR/export.log")"
run init "$TT_DIR/init" --init-from "$TT_DIR/clip.safetensors" ||
	fail "--init-from failed: $(tail -n 2 "$TT_DIR/init.log")"
grep -q "weights from $TT_DIR/clip.safetensors" "$TT_DIR/init.log" || fail "no 'weights from' line"
[ "$(wc -l <"$TT_DIR/init/metrics.jsonl")" = 3 ] || fail "the run from the file did not train 3 steps"
# the first step's loss starts from the source's final weights, not from a seeded initialisation
l_init=$(tt_field "$TT_DIR/init/metrics.jsonl" loss | head -1)
l_seed=$(tt_field "$TT_DIR/src/metrics.jsonl" loss | head -1)
[ "$l_init" != "$l_seed" ] || fail "the run from the file starts where a seeded one does ($l_init)"

if run wide "$TT_DIR/wide" --init-from "$TT_DIR/clip.safetensors" --embed-dim 24; then
	fail "another embedding width loaded without --init-skip-mismatched"
fi
grep -q "visual.proj .*text_projection.*--init-skip-mismatched" "$TT_DIR/wide.log" ||
	fail "the refusal does not name the projections: $(tail -n 1 "$TT_DIR/wide.log")"
run wide2 "$TT_DIR/wide2" --init-from "$TT_DIR/clip.safetensors" --embed-dim 24 --init-skip-mismatched ||
	fail "--init-skip-mismatched did not load: $(tail -n 2 "$TT_DIR/wide2.log")"
grep -q "kept at their initial values .*visual.proj" "$TT_DIR/wide2.log" || fail "the skipped projections are not named"
if run heads "$TT_DIR/heads" --init-from "$TT_DIR/clip.safetensors" --vis-heads 4; then
	fail "a file of 2 heads loaded into 4"
fi
grep -q "vision.heads is 2, this model's --vis-heads is 4" "$TT_DIR/heads.log" ||
	fail "the head mismatch is not named: $(tail -n 1 "$TT_DIR/heads.log")"
echo "--init-from trains from an exported file; width and head mismatches named"
