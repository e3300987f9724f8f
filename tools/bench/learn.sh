#!/usr/bin/env bash
# make bench-learn: does FastCLIP beat OpenCLIP at a small batch? On the demo's synthetic
# dataset, the tiny model is trained with openclip, fastclip-v1 and fastclip-v3 for the same
# steps and the same seeds (batch 32), and held-out retrieval is reported as mean ± spread.
# Not a test: it takes a while (9 runs) and reports what it observes, either way.
#   tools/bench/learn.sh [--smoke]
#   --smoke: the same script on a dataset of seconds, 5 steps, 2 seeds, openclip and fastclip-v3
#     (make test runs it: tests/test_bench_learn_smoke.sh); its figures mean nothing
#   env: STEPS (1200), SEEDS ("1 2 3"), LOSSES, PRECISION, DEMO_DATA, BENCH_LEARN_DIR, BUILD
set -euo pipefail
cd "$(dirname "$0")/../.."
smoke=0 data_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1; shift ;;
	*) echo "bench-learn: unknown argument '$1' (usage: tools/bench/learn.sh [--smoke])" >&2; exit 2 ;;
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
	seeds=(${SEEDS:-1 2 3})
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
python3 - "$results" "$steps" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def stat(loss, match, key):
    v = [100 * r[key] for r in rows if r["loss"] == loss and r["match"] == match]
    return statistics.mean(v), (max(v) - min(v)) / 2, len(v)
losses = list(dict.fromkeys(r["loss"] for r in rows))
print(f"held-out retrieval after {sys.argv[2]} steps, batch 32, tiny model (mean ± half-range over seeds)")
for match in ("caption", "instance"):
    chance = next(r for r in rows if r["match"] == match)
    print(f"\nhit = {'any clip with the caption' if match == 'caption' else 'the clip itself'}"
          f" (chance R@1 {100 * chance['chance_r1']:.1f}%, R@5 {100 * chance['chance_r5']:.1f}%)")
    print(f"{'loss':<13} {'t2v R@1':>13} {'t2v R@5':>13} {'v2t R@1':>13} {'v2t R@5':>13} seeds")
    for loss in losses:
        cells = [stat(loss, match, k) for k in ("t2v_r1", "t2v_r5", "v2t_r1", "v2t_r5")]
        print(f"{loss:<13} " + " ".join(f"{m:6.1f} ± {s:4.1f}" for m, s, _ in cells) + f"   {cells[0][2]}")
best = {l: stat(l, "caption", "t2v_r1")[0] for l in losses}
base = best.get("openclip")
print("\nbench-learn: t2v R@1 (caption hits) " + ", ".join(f"{l} {v:.1f}%" for l, v in best.items()) +
      (f"; fastclip-v3 / openclip = {best['fastclip-v3'] / base:.2f}" if base and "fastclip-v3" in best else ""))
PY
