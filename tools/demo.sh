#!/usr/bin/env bash
# The demo (make demo): synthesize a small video-caption dataset, prepare it, train the tiny
# model with FastCLIP-v3 on the CPU (2 loaders feeding 1 trainer through the shared-memory
# ring), evaluate held-out retrieval next to chance, and draw the run's curves.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
data=${DEMO_DATA:-$build/demo-data}
steps=${DEMO_STEPS:-1200}
run=${DEMO_RUN:-runs/demo-$(date +%Y%m%d-%H%M%S)}
precision=${DEMO_PRECISION:-auto} # bf16: train with bf16 activations and weight copies (CPU too)
for b in tools/synth tools/prep tools/launch.sh tools/eval tools/plot trainer/trainer loaderd/loaderd; do
	[ -x "$b" ] || { echo "demo: $b is not built (run make)"; exit 1; }
done

echo "== 1/4 synthetic dataset: 8 training + 4 held-out videos of 2 minutes (held-out captions pair colours and actions never seen in training)"
tools/demo-data.sh "$data"
tools/prep --info "$data/train/manifest" | grep -E '^(samples|chunks)'
vocab=$(tools/prep --info "$data/train/manifest" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p')
model=(--model tiny --vocab "$vocab")

# synth repeats captions ("a red square moves left" many times), so a hit is any clip with the
# query's caption (--match caption), and chance is computed for exactly that
echo "== 2/4 the untrained model on the held-out split (what chance looks like)"
tools/eval --manifest "$data/heldout/manifest" --init-seed 1 "${model[@]}" --match caption --quiet | sed 's/^/   /'

echo "== 3/4 training: tiny model, FastCLIP-v3, batch 32, $steps steps; 2 loaders -> ring -> 1 CPU trainer"
tools/launch.sh 1 --manifest "$data/train/manifest" --run-dir "$run" --loaders-per-node 2 -- "${model[@]}" \
	--loss fastclip-v3 --batch-size 32 --steps "$steps" --lr 2e-3 --warmup-steps 50 \
	--log-every 100 --eval-manifest "$data/heldout/manifest" --eval-every 300 --eval-match caption --precision "$precision"

echo "== 4/4 held-out retrieval of the trained model"
tools/eval --manifest "$data/heldout/manifest" --ckpt "$run" --match caption --quiet | sed 's/^/   /'
tools/plot "$run"
echo "demo: done. Curves: $run/plot.png; metrics: $run/metrics.jsonl; held-out evaluations: $run/eval.jsonl"
