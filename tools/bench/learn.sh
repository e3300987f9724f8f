#!/usr/bin/env bash
# make bench-learn: does FastCLIP beat OpenCLIP at a small batch? On the demo's synthetic
# dataset, the tiny model is trained with openclip, fastclip-v1 and fastclip-v3 for the same
# steps and the same seeds (batch 32), and held-out retrieval is reported as mean ± spread, then
# each loss against openclip as the paired per-seed difference with its 95% t interval.
# Not a test: it takes a while (15 runs) and reports what it observes, either way.
#   tools/bench/learn.sh [--smoke] [--heldout-videos N]
#   --smoke: the same script on a dataset of seconds, 5 steps, 2 seeds, openclip and fastclip-v3
#     (make test runs it: tests/test_bench_learn_smoke.sh); its figures mean nothing
#   --heldout-videos N: held-out videos of the dataset (default 8, about 100 clips)
#   env: STEPS (1200), SEEDS ("1 2 3 4 5"), LOSSES, PRECISION, DEMO_DATA, BENCH_LEARN_DIR, BUILD
set -euo pipefail
cd "$(dirname "$0")/../.."
smoke=0 data_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1; shift ;;
	--heldout-videos)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "bench-learn: --heldout-videos takes a positive count, not '${2:-}'" >&2; exit 2; }
		data_args+=(--heldout-videos "$2")
		shift 2
		;;
	*) echo "bench-learn: unknown argument '$1' (usage: tools/bench/learn.sh [--smoke] [--heldout-videos N])" >&2; exit 2 ;;
	esac
done
build=${BUILD:-build}
if [ $smoke = 1 ]; then
	data_args+=(--smoke)
	data=${DEMO_DATA:-$build/bench-learn-smoke/data}
	out=${BENCH_LEARN_DIR:-$build/bench-learn-smoke}
	steps=${STEPS:-5}
	seeds=(${SEEDS:-1 2})
	losses=(${LOSSES:-openclip fastclip-v3})
else
	data=${DEMO_DATA:-$build/demo}
	out=${BENCH_LEARN_DIR:-$build/bench-learn}
	steps=${STEPS:-1200}
	seeds=(${SEEDS:-1 2 3 4 5})
	losses=(${LOSSES:-openclip fastclip-v1 fastclip-v3})
fi
warmup=$((steps < 100 ? steps / 2 : 50))
precision=${PRECISION:-auto} # bf16: the CPU backend's bf16 storage (activations, weight copies)
tools/demo-data.sh "$data" "${data_args[@]}" >/dev/null
vocab=$(tools/prep --info "$data/train/manifest" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p')
mkdir -p "$out"
results=$out/results.jsonl
: >"$results"
for loss in "${losses[@]}"; do
	for seed in "${seeds[@]}"; do
		run=$out/$loss-seed$seed
		rm -rf "$run"
		t0=$(date +%s)
		tools/launch.sh 1 --manifest "$data/train/manifest" --run-dir "$run" --loaders-per-node 2 --seed "$seed" -- \
			--model tiny --vocab "$vocab" --init-seed "$seed" --loss "$loss" --batch-size 32 --steps "$steps" --lr 2e-3 \
			--warmup-steps "$warmup" --threads 1 --log-every 1000000 --precision "$precision" >"$out/$loss-seed$seed.log" 2>&1 ||
			{ echo "bench-learn: $loss seed $seed failed, see $out/$loss-seed$seed.log"; exit 1; }
		for match in caption instance; do
			line=$(tools/eval --manifest "$data/heldout/manifest" --ckpt "$run" --match "$match" --json --quiet)
			echo "{\"loss\":\"$loss\",\"seed\":$seed,\"match\":\"$match\",${line#\{}" >>"$results"
		done
		echo "bench-learn: $loss seed $seed done in $(($(date +%s) - t0)) s"
	done
done
python3 tools/bench/learn_stats.py "$results" "$steps"
