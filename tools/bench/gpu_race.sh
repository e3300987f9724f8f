#!/usr/bin/env bash
# The GPU race of issue 13 item 5: our `make bench-gpu` and the same model and batch in PyTorch
# (tools/bench/torch_clip.py), timed in the same run on the same GPU, the ratio printed last.
#
# Contract with `make bench-gpu` (tools/bench/bench_gpu.sh): it exits 77 without a GPU and
# otherwise prints, among its output, one JSON line per configuration it measured with
#   {"impl": "avclip", "preset": ..., "batch": B, "frames": T, "image_size": S, "loss": ...,
#    "clips_per_s": ..., "step_ms": ..., "peak_mem_gib": ..., "mfu": ...}
# The last such line sets the batch PyTorch runs at ("at equal batch"). bench_gpu.sh calls this
# script with --ours LINE once it has measured, so both run in one go; without --ours this script
# runs make bench-gpu itself (which then runs PyTorch too). No ratio is made up: one side missing
# (no GPU, no torch) gives exit 77 and says which.
#
# Usage: tools/bench/gpu_race.sh [--preset vit-b16] [--frames 4] [--image-size 224]
#                                [--loss fastclip-v3] [--batch-size B] [--steps 20] [--ours JSON]
#   --batch-size: PyTorch's batch when our side reports none (default 64). PYTHON: python3 with torch.
set -uo pipefail
cd "$(dirname "$0")/../.."
preset=vit-b16 frames=4 size=224 loss=fastclip-v3 batch=64 steps=20 given=
while [ $# -gt 0 ]; do
	case $1 in
	--preset) preset=$2; shift 2 ;;
	--frames) frames=$2; shift 2 ;;
	--image-size) size=$2; shift 2 ;;
	--loss) loss=$2; shift 2 ;;
	--batch-size) batch=$2; shift 2 ;;
	--steps) steps=$2; shift 2 ;;
	--ours) given=$2; shift 2 ;;
	*) echo "gpu_race: unknown option $1 (see the head of $0)"; exit 1 ;;
	esac
done
py=${PYTHON:-python3}
"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null
case $? in
0) ;;
77) echo "skip: no GPU visible to PyTorch ($py)"; exit 77 ;;
*) echo "skip: $py has no torch"; exit 77 ;;
esac
field() { "$py" -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], ""))' "$1" "$2"; }

echo "== avclip (make bench-gpu) =="
if [ -n "$given" ]; then
	ours_rc=0 ours_out=$given
	echo "$given"
elif make -n bench-gpu >/dev/null 2>&1; then
	ours_out=$(make --no-print-directory bench-gpu 2>&1)
	ours_rc=$?
	echo "$ours_out" | tail -n 20
else
	ours_rc=77
	echo "make has no bench-gpu target in this tree"
fi
ours=""
[ $ours_rc -eq 0 ] && ours=$(echo "$ours_out" | grep -E '^\{"impl": *"avclip"' | tail -n 1)
if [ -n "$ours" ]; then
	batch=$(field "$ours" batch)
	for k in preset frames image_size loss; do
		want=$preset; [ $k = frames ] && want=$frames; [ $k = image_size ] && want=$size; [ $k = loss ] && want=$loss
		[ "$(field "$ours" $k)" = "$want" ] || { echo "gpu_race: bench-gpu measured $k=$(field "$ours" $k), the race is for $want"; exit 1; }
	done
fi

echo "== PyTorch (tools/bench/torch_clip.py, batch $batch) =="
theirs=$("$py" tools/bench/torch_clip.py --device cuda --preset "$preset" --frames "$frames" --image-size "$size" \
	--loss "$loss" --batch-size "$batch" --steps "$steps")
torch_rc=$?
echo "$theirs"

if [ $ours_rc -eq 0 ] && [ -n "$ours" ] && [ $torch_rc -eq 0 ]; then
	"$py" - "$ours" "$theirs" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2].splitlines()[-1])
print(f"ratio avclip/pytorch clips/s: {a['clips_per_s'] / b['clips_per_s']:.2f} "
      f"({a['clips_per_s']:.1f} vs {b['clips_per_s']:.1f}; {a['preset']}, batch {a['batch']}, T={a['frames']}, "
      f"{a['image_size']} px, {a['loss']}; peak GiB {a['peak_mem_gib']} vs {b['peak_mem_gib']}; MFU {a.get('mfu')})")
PY
	exit 0
fi
if [ $ours_rc -eq 77 ]; then
	echo "ratio: none: our side exited 77 (no GPU or no CUDA backend in this build); PyTorch alone is above"
	exit 77
fi
echo "ratio: none: avclip exit $ours_rc${ours:+ (no avclip JSON line)}, PyTorch exit $torch_rc"
exit 1
