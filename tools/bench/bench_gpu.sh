#!/usr/bin/env bash
# make bench-gpu (issue 13 item 5): the trainer on one GPU, vit-b16 at T=4, 224 px, text 77, embed
# 256, bf16, the largest batch that fits (trainer query fit-batch, at most 256), fed (a) from a ring
# that 4 synthetic producers keep full (compute alone) and (b) from a ring that loaderd fills from
# synthetic chunks (tools/synth + tools/prep); clips/s, step ms, MFU against the bf16 matmul peak
# measured first (tests/bench_gpu_peak: the contract's linear op), peak device memory and the data
# wait's share, one JSON line each; then the same model and batch in PyTorch (tools/bench/gpu_race.sh,
# in this run, on this GPU) and the ratio, last. Exit 77 without a GPU or without the CUDA backend.
#
#   tools/bench/bench_gpu.sh [--steps N] [--max-batch B] [--loaders K]   (BUILD, PYTHON as for make)
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
steps=40 max_batch=256 loaders=$(($(nproc) / 2))
while [ $# -gt 0 ]; do
	case $1 in
	--steps) steps=$2; shift 2 ;;
	--max-batch) max_batch=$2; shift 2 ;;
	--loaders) loaders=$2; shift 2 ;;
	*) echo "bench_gpu: unknown option $1 (see the head of $0)"; exit 2 ;;
	esac
done
[ "$loaders" -ge 1 ] || loaders=1
peak_out=$("$BUILD/tests/bench_gpu_peak" 2>&1)
rc=$?
[ $rc = 77 ] && { echo "bench-gpu: skipped ($peak_out)"; exit 77; }
[ $rc = 0 ] || { echo "bench-gpu: the matmul peak failed: $peak_out"; exit 1; }
echo "$peak_out"
peak=$(sed -n 's/.*"tflops": *\([0-9.]*\).*/\1/p' <<<"$peak_out")

tmp=$(mktemp -d /tmp/avclip-bench-gpu.XXXXXX)
tag=bg$$
cleanup() {
	[ -n "${pids:-}" ] && kill $pids 2>/dev/null
	wait 2>/dev/null
	tools/ringctl destroy --ring "$tag" >/dev/null 2>&1
	tools/ringctl destroy --ring "$tag-ld" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
DS=100000
model=(--model vit-b16 --frames 4 --image-size 224 --ctx-len 77 --embed-dim 256 --precision bf16 --backend cuda
	--loss fastclip-v3 --dataset-size $DS --vocab 49408)
# the device's free memory as the driver reports it, less 5% for the CUDA context and cuBLASLt's
# own allocations, which the plan does not count
free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0 2>/dev/null | head -n 1)
limit=()
[ -n "$free_mib" ] && limit=(--memory-limit "$(awk -v m="$free_mib" 'BEGIN { printf "%.2f", m * 0.95 / 1024 }')")
B=$(trainer/trainer query fit-batch "${model[@]}" "${limit[@]}" --batch-size "$max_batch" 2>&1) ||
	{ echo "bench-gpu: trainer query fit-batch: $B"; exit 1; }
Bck=$(trainer/trainer query fit-batch "${model[@]}" "${limit[@]}" --batch-size 4096 --grad-checkpoint 2>/dev/null)
echo "largest batch that fits: $B (capped at $max_batch); with --grad-checkpoint: ${Bck:-?}"
geom=$(trainer/trainer query geometry "${model[@]}")

# median over the steps after the first 10 of a metrics.jsonl field
med() {
	sed -n "s/.*\"step\":\([0-9]*\),.*\"$2\":\([^,}]*\).*/\1 \2/p" "$1" | awk '$1 > 10 { print $2 }' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
report() { # report FEED RUN_DIR
	local m=$2/metrics.jsonl peakmem
	peakmem=$(sed -n 's/.*"mem_peak_bytes":\([^,}]*\).*/\1/p' "$m" | sort -g | tail -n 1)
	printf '{"impl": "avclip", "feed": "%s", "preset": "vit-b16", "batch": %s, "frames": 4, "image_size": 224, ' "$1" "$B"
	printf '"loss": "fastclip-v3", "clips_per_s": %s, "step_ms": %s, "peak_mem_gib": %.2f, "mfu": %s, ' \
		"$(med "$m" samples_per_s)" "$(awk -v s="$(med "$m" step_s)" 'BEGIN { print s * 1000 }')" \
		"$(awk -v b="$peakmem" 'BEGIN { print b / 1073741824 }')" "$(med "$m" mfu)"
	printf '"data_wait_pct": %s, "peak_tflops": %s}\n' "$(med "$m" data_wait_pct)" "$peak"
}
train() { # train RING RUN_DIR
	trainer/trainer --ring "$1" "${model[@]}" "${limit[@]}" --batch-size "$B" --steps "$steps" --peak-tflops "$peak" \
		--metrics-every 5 --log-every 10 --run-dir "$2" 2>"$2.log" ||
		{ echo "bench-gpu: the trainer failed: $(tail -n 3 "$2.log")"; exit 1; }
}

# (a) compute alone: a ring kept full by synthetic producers
tools/ringctl create --ring "$tag" $geom --ranks 1 --slots $((4 * B)) --replace >/dev/null || exit 1
pids=""
for _ in 1 2 3 4; do
	"$BUILD/tests/trainer_feeder" --ring "$tag" --dataset-size $DS --vocab 49408 2>/dev/null &
	pids+=" $!"
done
sleep 5
train "$tag" "$tmp/prefilled"
kill $pids 2>/dev/null
pids=""
prefilled=$(report prefilled "$tmp/prefilled")

# (b) loaderd on synthetic chunks (short side 256, so 224 crops cut without upscaling)
tools/synth --out "$tmp/src" --videos 8 --minutes 1 --size 456x256 --scene-seed 3 >/dev/null 2>&1 &&
	tools/prep --annotations "$tmp/src/train.csv" --video-root "$tmp/src/videos" --out "$tmp/data" --short-side 256 \
		--chunk-sec 15 --train-bpe 2000 >/dev/null 2>&1 || { echo "bench-gpu: making the synthetic chunks failed"; exit 1; }
tools/ringctl create --ring "$tag-ld" $geom --ranks 1 --slots $((4 * B)) --replace >/dev/null || exit 1
loaderd/loaderd --ring "$tag-ld" --manifest "$tmp/data/manifest" --workers "$loaders" 2>"$tmp/loaderd.log" &
pids=$!
sleep 5
train "$tag-ld" "$tmp/loaderd"
kill $pids 2>/dev/null
pids=""
echo "$(report loaderd "$tmp/loaderd")"
echo "(loaderd: $loaders decode threads on $(nproc) cores)"
echo "$prefilled"
# PyTorch at the same batch in this run, and the ratio last (against the compute-alone line)
PYTHON=${PYTHON:-python3} bash tools/bench/gpu_race.sh --ours "$prefilled" --steps 20
