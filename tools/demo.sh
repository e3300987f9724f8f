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
seed=${DEMO_SEED:-1} # the data stream's (which clip and crop each position gets) and the initial weights'
precision=${DEMO_PRECISION:-auto} # bf16: train with bf16 activations and weight copies (CPU too)
for b in tools/synth tools/prep tools/launch.sh tools/eval tools/plot trainer/trainer loaderd/loaderd; do
	[ -x "$b" ] || { echo "demo: $b is not built (run make)"; exit 1; }
done

t0=$(date +%s)
echo "== 1/4 synthetic dataset: 40 training + 8 held-out videos of 2 minutes (held-out captions pair colours and actions never seen in training)"
tools/demo-data.sh "$data"
tools/prep --info "$data/train/manifest" | grep -E '^(samples|chunks)'
vocab=$(tools/prep --info "$data/train/manifest" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p')
model=(--model tiny --vocab "$vocab")

# synth repeats captions ("a red square moves left" many times), so a hit is any clip with the
# query's caption (--match caption), and chance is computed for exactly that
echo "== 2/4 the untrained model on the held-out split (what chance looks like)"
tools/eval --manifest "$data/heldout/manifest" --init-seed "$seed" "${model[@]}" --match caption --quiet | sed 's/^/   /'

# held-out text->video R@1 every 150 steps; the checkpoint of the best one is kept apart from the
# last ones (--keep-best: RUN/ckpt/best) and is the one evaluated below
echo "== 3/4 training: tiny model, FastCLIP-v3, batch 32, $steps steps, seed $seed; 2 loaders -> ring -> 1 CPU trainer"
tools/launch.sh 1 --manifest "$data/train/manifest" --run-dir "$run" --loaders-per-node 2 --seed "$seed" -- "${model[@]}" \
	--init-seed "$seed" --loss fastclip-v3 --batch-size 32 --steps "$steps" --lr 2e-3 --warmup-steps 50 \
	--log-every 100 --eval-manifest "$data/heldout/manifest" --eval-every 150 --eval-match caption \
	--keep-best t2v_r1 --precision "$precision"

if [ -s "$run/ckpt/best/best.json" ]; then
	ckpt=$run/ckpt/best best=$(sed -n 's/.*"step":\([0-9]*\).*/\1/p' "$ckpt/best.json")
	echo "== 4/4 held-out retrieval of the best checkpoint (step $best of $steps, by text->video R@1)"
	echo "   text->video R@1 by step: $(sed -n 's/.*"step":\([0-9]*\),.*"t2v_r1":\([^,]*\),.*/\1 \2/p' "$run/eval.jsonl" |
		awk '{printf "%s%s %.1f%%", (NR > 1 ? ", " : ""), $1, 100 * $2}')"
else # stopped before its first evaluation
	ckpt=$run best=last
	echo "== 4/4 held-out retrieval of the last checkpoint (the run stopped before its first evaluation)"
fi
tools/eval --manifest "$data/heldout/manifest" --ckpt "$ckpt" --match caption --quiet | sed 's/^/   /'
tools/plot "$run"
echo "demo: done in $(($(date +%s) - t0)) s. Evaluated: $ckpt (step $best); curves: $run/plot.png;" \
	"metrics: $run/metrics.jsonl; held-out evaluations: $run/eval.jsonl"
