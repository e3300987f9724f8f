#!/usr/bin/env bash
# make demo-finetune [--smoke]: what AVION reports after pretraining, on synth: pretrain the tiny model
# contrastively, fine-tune its video tower on synth's action and shape labels (trainer --objective
# classify --init-from), and compare top-1 on test videos with chance and with a linear probe on the
# frozen pretrained features. Fails unless fine-tuning beats both clearly; --smoke: seconds, unchecked.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
smoke=0
[ "${1:-}" = --smoke ] && smoke=1 && shift
[ $# = 0 ] || { echo "usage: tools/demo-finetune.sh [--smoke]" >&2; exit 2; }
for b in tools/synth tools/prep tools/launch.sh tools/eval tools/export tools/plot trainer/trainer loaderd/loaderd; do
	[ -x "$b" ] || { echo "demo-finetune: $b is not built (run make)"; exit 1; }
done
if [ "$smoke" = 1 ]; then # the pipeline end to end in seconds (make test): a few steps, nothing checked
	data=$(mktemp -d /tmp/demo-finetune-smoke.XXXXXX) run=$data/run
	trap 'rm -rf "$data"' EXIT
	pre=${DEMO_PRETRAIN_STEPS:-6} ft=${DEMO_FINETUNE_STEPS:-6} views=${DEMO_VIEWS:-1x1} batch=8 every=3
	dataflags=(--smoke)
else
	data=${DEMO_DATA:-$build/demo-data} run=${DEMO_RUN:-runs/demo-finetune-$(date +%Y%m%d-%H%M%S)}
	pre=${DEMO_PRETRAIN_STEPS:-600} ft=${DEMO_FINETUNE_STEPS:-1500} views=${DEMO_VIEWS:-1x1} batch=32 every=250
	dataflags=()
fi
seed=${DEMO_SEED:-1}
t0=$(date +%s)
field() { sed -n "s/.*\"$1\":\([-0-9.e]*\).*/\1/p" "$2"; }
pct() { awk -v v="$1" 'BEGIN { printf "%.1f%%", 100 * v }'; }

echo "== 1/5 synthetic dataset: make demo's, its training clips labelled with their action and shape, and labelled test videos of the training world"
tools/demo-data.sh "$data" --labels "${dataflags[@]}"
tools/prep --info "$data/train-labels/manifest" | grep -E '^(samples|label head)' | sed 's/^/   train: /'
tools/prep --info "$data/test-labels/manifest" | grep -E '^samples' | sed 's/^/   test:  /'
vocab=$(tools/prep --info "$data/train/manifest" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p')
model=(--model tiny --vocab "$vocab")
mkdir -p "$run"

echo "== 2/5 pretraining: tiny model, FastCLIP-v3 on the captions, batch $batch, $pre steps (make demo's, no flips: 'moves left' stays left)"
tools/launch.sh 1 --manifest "$data/train/manifest" --run-dir "$run/pretrain" --loaders-per-node 2 --seed "$seed" -- \
	"${model[@]}" --init-seed "$seed" --loss fastclip-v3 --batch-size "$batch" --steps "$pre" --lr 2e-3 \
	--warmup-steps 50 --no-flip --log-every 100 >"$run/pretrain.log" 2>&1 || { tail -n 20 "$run/pretrain.log"; exit 1; }
sed -n 's/.* launch: \(last metrics.*\)/   \1/p' "$run/pretrain.log"
tools/export "$run/pretrain" --out "$run/pretrained.safetensors" 2>>"$run/pretrain.log"

echo "== 3/5 linear probe on the frozen pretrained features: fitted on the training clips' labels, scored on the test clips ($views views)"
P=(--manifest "$data/test-labels/manifest" --views "$views" --quiet)
tools/eval --task probe --train-manifest "$data/train-labels/manifest" --ckpt "$run/pretrain" "${P[@]}" --json \
	>"$run/probe.json"
echo "   probe test top-1: action $(pct "$(field head0_top1 "$run/probe.json")"), shape $(pct "$(field head1_top1 "$run/probe.json")")"

echo "== 4/5 fine-tuning: the pretrained video tower and a linear head per label head (trainer --objective classify --init-from), $ft steps"
tools/launch.sh 1 --manifest "$data/train-labels/manifest" --run-dir "$run/finetune" --loaders-per-node 2 --seed "$seed" -- \
	"${model[@]}" --objective classify --init-from "$run/pretrained.safetensors" --batch-size "$batch" --steps "$ft" \
	--lr 3e-3 --warmup-steps 50 --weight-decay 0.05 --mixup 0 --cutmix 0 --label-smoothing 0 --layer-decay 1 --no-flip \
	--ckpt-every "$every" --keep-last 0 --log-every 100 >"$run/finetune.log" 2>&1 ||
	{ tail -n 20 "$run/finetune.log"; exit 1; }
sed -n 's/.* launch: \(last metrics.*\)/   \1/p' "$run/finetune.log"

echo "== 5/5 action recognition on the test clips, each fine-tuning checkpoint ($views views, logits averaged)"
for c in "$run"/finetune/ckpt/ckpt-*.safetensors; do
	tools/eval --task classify --ckpt "$c" "${P[@]}" --json --append "$run/finetune/eval.jsonl" >"$run/finetuned.json"
	echo "   step $(field step "$run/finetuned.json"): action $(pct "$(field head0_top1 "$run/finetuned.json")")," \
		"shape $(pct "$(field head1_top1 "$run/finetuned.json")"), (action, shape) pair $(pct "$(field action_top1 "$run/finetuned.json")")"
done
tools/eval --task classify --ckpt "$run/finetune" "${P[@]}" | sed 's/^/   /'
tools/plot "$run/finetune" 2>/dev/null

F=$run/finetuned.json Q=$run/probe.json
printf '\n   %-22s %10s %10s %12s\n' "test top-1" chance probe fine-tuned
names=(action shape) # synth's labels: head label = the caption's action, label2 = its shape
for k in 0 1; do
	printf '   %-22s %10s %10s %12s\n' "${names[$k]} ($(field head${k}_classes "$F") classes)" \
		"$(pct "$(field head${k}_chance_top1 "$F")")" "$(pct "$(field head${k}_top1 "$Q")")" "$(pct "$(field head${k}_top1 "$F")")"
done
printf '   %-22s %10s %10s %12s\n' "(action, shape) pair" "$(pct "$(field action_chance_top1 "$F")")" \
	"$(pct "$(field action_top1 "$Q")")" "$(pct "$(field action_top1 "$F")")"
echo "demo-finetune: done in $(($(date +%s) - t0)) s; run: $run (pretrain/, finetune/ with plot.png and eval.jsonl)"
# clearly: on the action head, 5 points above the probe and twice chance; on the (action, shape)
# pair, 2 points above the probe (its shape half is where probe and fine-tuning meet: see
# docs/training.md) and twice chance
verdict=$(awk -v f="$(field head0_top1 "$F")" -v p="$(field head0_top1 "$Q")" -v c="$(field head0_chance_top1 "$F")" \
	-v fa="$(field action_top1 "$F")" -v pa="$(field action_top1 "$Q")" -v ca="$(field action_chance_top1 "$F")" \
	'BEGIN { ok = f >= p + 0.05 && f >= 2 * c && fa >= pa + 0.02 && fa >= 2 * ca; print ok ? "beats" : "does NOT beat" }')
line="fine-tuned / probe / chance top-1: action $(pct "$(field head0_top1 "$F")") / $(pct "$(field head0_top1 "$Q")") / $(pct "$(field head0_chance_top1 "$F")"), (action, shape) pair $(pct "$(field action_top1 "$F")") / $(pct "$(field action_top1 "$Q")") / $(pct "$(field action_chance_top1 "$F")")"
if [ "$smoke" = 1 ]; then
	echo "demo-finetune smoke ($pre + $ft steps, not checked): $line"
	exit 0
fi
echo "demo-finetune: fine-tuning $verdict the probe and chance clearly (action +5 points, pair +2, both twice chance): $line"
[ "$verdict" = beats ]
