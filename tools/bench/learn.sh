#!/usr/bin/env bash
# make bench-learn: does FastCLIP beat OpenCLIP at a small batch? On synthetic data (tools/synth's
# hard world by default: 10 colours, 6 shapes, 10 actions, a distractor, held-out colour x shape x
# action triples, 80 held-out videos = over 2,000 held-out clips), the tiny model is trained with
# each loss for the same samples seen and the same seeds, at each batch size; held-out retrieval
# is reported as mean ± spread, then each loss against openclip as the paired per-seed difference
# with its 95% t interval. Not a test: it takes a while and reports what it observes, either way.
#   tools/bench/learn.sh [--smoke] [--world basic|hard] [--heldout-videos N] [--images N]
#   --smoke: the same script on a dataset of seconds, 5 steps, 2 seeds, openclip and fastclip-v3
#     (make test runs it: tests/test_bench_learn_smoke.sh); its figures mean nothing
#   --world: basic is the demo's dataset (colour x action pairs held out, 8 held-out videos)
#   --heldout-videos N: held-out videos of the dataset (default 80 hard, 8 basic; ~25 clips each)
#   --images N: the image-text variant (FastCLIP's own setting): N training images of the world
#     (synth --images; N/4 held out, so 8000 gives 2,000), a model of one frame
#   env: BATCHES ("32"; e.g. "32 64 128"), SAMPLES (samples seen per run: 38400, i.e. 1200 steps
#     of 32; steps = SAMPLES / batch), STEPS (overrides), SEEDS ("1 2 3 4 5"), LOSSES (openclip
#     and fastclip-v0 to v3), PRECISION, DEMO_DATA, BENCH_LEARN_DIR, BUILD
set -euo pipefail
cd "$(dirname "$0")/../.."
smoke=0 data_args=() world=hard heldout= images=0
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1; shift ;;
	--world)
		[[ ${2:-} =~ ^(basic|hard)$ ]] || { echo "bench-learn: --world is basic or hard, not '${2:-}'" >&2; exit 2; }
		world=$2
		shift 2
		;;
	--heldout-videos)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "bench-learn: --heldout-videos takes a positive count, not '${2:-}'" >&2; exit 2; }
		heldout=$2
		shift 2
		;;
	--images)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "bench-learn: --images takes a positive count, not '${2:-}'" >&2; exit 2; }
		images=$2
		shift 2
		;;
	*) echo "bench-learn: unknown argument '$1' (usage: tools/bench/learn.sh [--smoke] [--world basic|hard] [--heldout-videos N] [--images N])" >&2; exit 2 ;;
	esac
done
build=${BUILD:-build}
[ -n "$heldout" ] || { [ $world = hard ] && heldout=80 || heldout=8; }
data_args+=(--world "$world" --heldout-videos "$heldout")
batches=(${BATCHES:-32})
samples=${SAMPLES:-38400}
if [ $smoke = 1 ]; then
	data_args+=(--smoke)
	data=${DEMO_DATA:-$build/bench-learn-smoke/data}
	out=${BENCH_LEARN_DIR:-$build/bench-learn-smoke}
	STEPS=${STEPS:-5}
	seeds=(${SEEDS:-1 2})
	losses=(${LOSSES:-openclip fastclip-v3})
else
	# the basic world's data is the demo's (make demo made it already); the hard world's its own
	if [ "$images" -gt 0 ]; then
		data=${DEMO_DATA:-$build/bench-learn-images-$world-$images}
	elif [ $world = basic ]; then
		data=${DEMO_DATA:-$build/demo}
	else
		data=${DEMO_DATA:-$build/bench-learn-data-$world-$heldout}
	fi
	out=${BENCH_LEARN_DIR:-$build/bench-learn}
	seeds=(${SEEDS:-1 2 3 4 5})
	losses=(${LOSSES:-openclip fastclip-v0 fastclip-v1 fastclip-v2 fastclip-v3})
fi
for b in "${batches[@]}"; do
	[[ $b =~ ^[1-9][0-9]*$ ]] || { echo "bench-learn: BATCHES holds '$b', not a batch size" >&2; exit 2; }
done
precision=${PRECISION:-auto} # bf16: the CPU backend's bf16 storage (activations, weight copies)
# image_data DIR: synth's N images of the world (N/4 held out) as train/ and heldout/ manifests,
# made once (DIR/params says what made it)
image_data() {
	local n=$images params
	[ $smoke = 1 ] && n=64
	params="synth --world $world --images $n --size 160x96 --scene-seed 1"
	if [ -s "$1/heldout/manifest" ] && [ "$(cat "$1/params" 2>/dev/null)" = "$params" ]; then return 0; fi
	rm -rf "$1"
	tools/synth --out "$1/src" --world "$world" --videos 0 --heldout 0 --images "$n" --shard-size 1000 \
		--size 160x96 --scene-seed 1
	mkdir -p "$1/src/heldout-shards"
	mv "$1/src/shards"/heldout-*.tar "$1/src/heldout-shards/"
	tools/prep --shards "$1/src/shards" --out "$1/train"
	tools/prep --shards "$1/src/heldout-shards" --out "$1/heldout" --bpe "$1/train/bpe_merges.txt"
	echo "$params" >"$1/params"
}
frames=()
if [ "$images" -gt 0 ]; then
	image_data "$data" >/dev/null 2>&1 || { echo "bench-learn: making the image data in $data failed" >&2; exit 1; }
	frames=(--frames 1)
	world=$world-images
else
	tools/demo-data.sh "$data" "${data_args[@]}" >/dev/null
fi
vocab=$(tools/prep --info "$data/train/manifest" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p')
mkdir -p "$out"
for batch in "${batches[@]}"; do
	steps=${STEPS:-$(((samples + batch - 1) / batch))}
	warmup=$((steps < 100 ? steps / 2 : 50))
	results=$out/results-b$batch.jsonl
	: >"$results"
	for loss in "${losses[@]}"; do
		for seed in "${seeds[@]}"; do
			name=$loss-b$batch-seed$seed run=$out/$loss-b$batch-seed$seed
			rm -rf "$run"
			t0=$(date +%s)
			tools/launch.sh 1 --manifest "$data/train/manifest" --run-dir "$run" --loaders-per-node 2 --seed "$seed" -- \
				--model tiny "${frames[@]}" --vocab "$vocab" --init-seed "$seed" --loss "$loss" --batch-size "$batch" --steps "$steps" \
				--lr 2e-3 --warmup-steps "$warmup" --threads 1 --log-every 1000000 --precision "$precision" \
				>"$out/$name.log" 2>&1 || { echo "bench-learn: $name failed, see $out/$name.log"; exit 1; }
			for match in caption instance; do
				line=$(tools/eval --manifest "$data/heldout/manifest" --ckpt "$run" --match "$match" --json --quiet)
				echo "{\"loss\":\"$loss\",\"seed\":$seed,\"batch\":$batch,\"world\":\"$world\",\"match\":\"$match\",${line#\{}" >>"$results"
			done
			echo "bench-learn: $name ($steps steps) done in $(($(date +%s) - t0)) s"
		done
	done
	python3 tools/bench/learn_stats.py "$results" "$steps"
done
