#!/usr/bin/env bash
# tools/demo-data.sh DIR [--heldout-videos N] [--world basic|hard|compose] [--labels] [--images N]
#   [--heldout-images N] [--image-side S] [--context N] [--smoke]: the synthetic dataset of the demos
# and of bench-learn, made once into DIR/train/manifest and DIR/heldout/manifest (DIR/params says what
# made it; a dataset of other parameters is made again rather than trained on).
# Videos (the default): 40 training + 8 (N) held-out videos of 2 minutes (held-out captions pair colours
# and actions never seen in training; --world hard: tools/synth's harder world, held-out colour x shape
# x action triples), chunked; --smoke: 4 + 2 videos of 15 s, made in seconds. 40 videos (about 2000
# clips) so that the demo's 1200 steps of 32 are ~19 epochs, not the ~93 of 8 videos, over which
# held-out R@1 peaked early and fell; frames of 160x96 at 10 fps with chunks of short side 96, since
# the tiny model sees 32x32 crops of 2 frames: larger frames cost synth, prep and the loaders time and
# teach it nothing more.
# --labels (videos only) also, for make demo-finetune, the training clips labelled with synth's action
# (head label, 12 classes) and shape (label2, 6) in DIR/train-labels/manifest, and
# DIR/test-labels/manifest: 8 (smoke 2) more videos of the training world (scene seed 2, every colour x
# action pairing training sees), labelled alike; synth's held-out split pairs colours and actions
# training never shows, where an action classifier that learnt which actions a colour never does
# scores below chance by design.
# --images N: image-text pairs instead (tar shards, synth --images): N training images of the world
# (default compose) and --heldout-images of held-out combinations (default N/4), squares of side S
# (default 64: the tiny model sees 32x32 crops); --smoke: 64 + 16.
# --context N: caption tokens (prep --context; default 77), for a model of --ctx-len N.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: tools/demo-data.sh DIR [--heldout-videos N] [--world basic|hard|compose] [--labels] [--images N] [--heldout-images N] [--image-side S] [--context N] [--smoke]"
help() { sed -n '2,/^set -euo pipefail/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0; } # the header above
case ${1:-} in -h | --help) help ;; esac
data=${1:?$usage}
shift
videos=40 heldout=8 minutes=2 world= labels=0 test=8 images=0 heldout_images= side=64 context= smoke=0
count() { # count FLAG VALUE: a positive whole number, or exit 2 naming the flag
	[[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "demo-data: $1 takes a positive count, not '$2'" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
	case $1 in
	--heldout-videos) count "$1" "${2:-}"; heldout=$2; shift 2 ;;
	--world)
		[[ ${2:-} =~ ^(basic|hard|compose)$ ]] || { echo "demo-data: --world is basic, hard or compose, not '${2:-}'" >&2; exit 2; }
		world=$2
		shift 2
		;;
	--labels) labels=1; shift ;;
	--images) count "$1" "${2:-}"; images=$2; shift 2 ;;
	--heldout-images) count "$1" "${2:-}"; heldout_images=$2; shift 2 ;;
	--image-side)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] && [ $(($2 % 2)) = 0 ] && [ "$2" -ge 64 ] ||
			{ echo "demo-data: --image-side takes an even side of 64 or more, not '${2:-}'" >&2; exit 2; }
		side=$2
		shift 2
		;;
	--context) count "$1" "${2:-}"; context=$2; shift 2 ;;
	--smoke) smoke=1; shift ;; # seconds to make, for make test's smoke runs
	-h | --help) help ;;
	*) echo "demo-data: unknown argument '$1' ($usage)" >&2; exit 2 ;;
	esac
done
prep=()
if [ "$images" -gt 0 ]; then
	[ "$labels" = 0 ] || { echo "demo-data: --labels labels videos' clips (leave out --images)" >&2; exit 2; }
	world=${world:-compose}
	[ -n "$heldout_images" ] || heldout_images=$((images / 4 > 0 ? images / 4 : 1))
	[ $smoke = 0 ] || images=64 heldout_images=16
	synth=(--world "$world" --videos 0 --heldout 0 --images "$images" --heldout-images "$heldout_images"
		--size "${side}x$side" --shard-size 1000 --scene-seed 1)
else
	[ "$world" != compose ] || { echo "demo-data: --world compose is a world of images: give --images N" >&2; exit 2; }
	[ $smoke = 0 ] || videos=4 heldout=2 minutes=0.25 test=2
	synth=(--videos "$videos" --heldout "$heldout" --minutes "$minutes" --size 160x96 --fps 10 --scene-seed 1)
	[ -z "$world" ] || [ "$world" = basic ] || synth+=(--world "$world") # (the basic world's params line stays what it was)
	prep=(--short-side 96)
fi
[ -z "$context" ] || prep+=(--context "$context")
params="synth ${synth[*]}; prep ${prep[*]}"
# labels: the class lists number synth's actions and shapes; the clips are the caption files' rows
labelled() {
	local classes=$data/src/classes-action.txt,$data/src/classes-object.txt
	tools/prep --format labels-csv --classes "$classes" --annotations "$data/src/train-labels.csv" \
		--video-root "$data/src/videos" --out "$data/train-labels" --bpe "$data/train/bpe_merges.txt" "${prep[@]}"
	rm -rf "$data/src-test" "$data/test-labels"
	tools/synth --out "$data/src-test" --videos "$test" --heldout 0 --minutes "$minutes" --size 160x96 --fps 10 \
		--scene-seed 2 --write-labels $([ -z "$world" ] || [ "$world" = basic ] || echo --world "$world")
	tools/prep --format labels-csv --classes "$classes" --annotations "$data/src-test/train-labels.csv" \
		--video-root "$data/src-test/videos" --out "$data/test-labels" --bpe "$data/train/bpe_merges.txt" "${prep[@]}"
}
if [ -s "$data/heldout/manifest" ] && [ "$(cat "$data/params" 2>/dev/null)" = "$params" ] &&
	tools/prep --verify "$data/heldout/manifest" >/dev/null 2>&1; then
	if [ "$labels" = 0 ] || { [ -s "$data/test-labels/manifest" ] &&
		tools/prep --verify "$data/test-labels/manifest" >/dev/null 2>&1; }; then
		echo "dataset already prepared in $data"
		exit 0
	fi
	if [ -s "$data/src/train-labels.csv" ]; then # made before, without --labels
		rm -rf "$data/train-labels"
		labelled
		exit 0
	fi
	echo "demo-data: $data was made without synth's label files: making it again"
fi
[ -s "$data/heldout/manifest" ] && [ "$(cat "$data/params" 2>/dev/null)" != "$params" ] &&
	echo "demo-data: $data holds another dataset than [$params]: making it again"
rm -rf "$data/src" "$data/train" "$data/heldout" "$data/train-labels" "$data/src-test" "$data/test-labels" "$data/params"
if [ "$images" -gt 0 ]; then
	tools/synth --out "$data/src" "${synth[@]}"
	mkdir -p "$data/src/heldout-shards" # prep indexes every tar of a folder: the held-out ones apart
	mv "$data/src/shards"/heldout-*.tar "$data/src/heldout-shards/"
	tools/prep --shards "$data/src/shards" --out "$data/train" "${prep[@]}"
	tools/prep --shards "$data/src/heldout-shards" --out "$data/heldout" --bpe "$data/train/bpe_merges.txt" "${prep[@]}"
else
	tools/synth --out "$data/src" "${synth[@]}" --write-labels
	tools/prep --annotations "$data/src/train.csv" --video-root "$data/src/videos" --out "$data/train" "${prep[@]}"
	tools/prep --annotations "$data/src/heldout.csv" --video-root "$data/src/videos" --out "$data/heldout" \
		--bpe "$data/train/bpe_merges.txt" "${prep[@]}"
	[ "$labels" = 0 ] || labelled
fi
echo "$params" >"$data/params"
