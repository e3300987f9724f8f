#!/usr/bin/env bash
# make bench-learn: does FastCLIP beat OpenCLIP where its paper says it should, at a small batch
# relative to the dataset? Trains the tiny model with each loss (openclip, fastclip-v0..v3) for the
# same samples seen, the same seeds (data order and initial weights) and the same settings in each
# cell of batch x ranks, evaluates held-out retrieval, and reports each loss's mean with its 95%
# interval over the seeds and each FastCLIP version minus openclip paired per seed with its interval.
# Not a test: it takes a while and reports what it observes, either way.
#   tools/bench/learn.sh [--smoke] [--video] [--world W] [--images N] [--heldout-images N]
#                        [--heldout-videos N] [--jobs J]
#   default: the image-text variant, tools/synth's compose world (two objects, sizes, a relation, a
#     distractor; held-out images show a (colour, shape) object training never does): 4,000 training
#     and 2,000 held-out images (--images, --heldout-images), a model of one 32x32 frame, captions
#     of 16 tokens (docs/benchmarks.md says how each choice was measured)
#   --video: the video variant instead, the hard world's 40 training and 80 held-out videos
#     (--heldout-videos; 2,007 held-out clips), 2 frames
#   --smoke: the same script on a dataset of seconds, 5 steps, openclip and fastclip-v3, 2 seeds,
#     one cell of 2 ranks (make test runs it: tests/test_bench_learn_smoke.sh); its figures mean nothing
#   --jobs J: runs at once (default 2: each run is one trainer thread per rank and one loader; smoke 4)
#   env: CELLS (the sweep: "32x1 64x1 128x1 128x4", batch x ranks: the global batch, split over the
#     ranks), SAMPLES (samples seen per run, 25600: steps = SAMPLES / batch), STEPS (overrides),
#     SEEDS ("1 2 3 4 5"), LOSSES, FASTCLIP_ARGS (trainer flags added to the FastCLIP runs' recipe,
#     e.g. "--gamma-min 0.8": give such a run its own BENCH_LEARN_DIR), PRECISION, DEMO_DATA,
#     BENCH_LEARN_DIR, BUILD
# Every run is cached in BENCH_LEARN_DIR/runs/NAME (result.json beside the settings that made it):
# a killed sweep started again redoes only the runs without a result, and a changed setting redoes
# the runs it touches. The report is BENCH_LEARN_DIR/report.txt and report.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
usage="usage: tools/bench/learn.sh [--smoke] [--video] [--world W] [--images N] [--heldout-images N] [--heldout-videos N] [--jobs J]"
smoke=0 video=0 world= images=4000 heldout_images=2000 heldout_videos=80 jobs=
count() { # count FLAG VALUE: a positive whole number, or exit 2 naming the flag
	[[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "bench-learn: $1 takes a positive count, not '$2'" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1; shift ;;
	--video) video=1; shift ;;
	--world)
		[[ ${2:-} =~ ^(basic|hard|compose)$ ]] || { echo "bench-learn: --world is basic, hard or compose, not '${2:-}'" >&2; exit 2; }
		world=$2
		shift 2
		;;
	--images) count "$1" "${2:-}"; images=$2; shift 2 ;;
	--heldout-images) count "$1" "${2:-}"; heldout_images=$2; shift 2 ;;
	--heldout-videos) count "$1" "${2:-}"; heldout_videos=$2; shift 2 ;;
	--jobs) count "$1" "${2:-}"; jobs=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo pipefail/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "bench-learn: unknown argument '$1' ($usage)" >&2; exit 2 ;;
	esac
done
build=${BUILD:-build}
context=16 # the captions' tokens (prep --context, --ctx-len): every caption of both worlds fits
if [ $video = 1 ]; then
	world=${world:-hard}
	[ "$world" != compose ] || { echo "bench-learn: --world compose is a world of images (leave out --video)" >&2; exit 2; }
	data_args=(--world "$world" --heldout-videos "$heldout_videos")
	model=(--frames 2)
	variant="$world world, videos"
else
	world=${world:-compose}
	data_args=(--world "$world" --images "$images" --heldout-images "$heldout_images")
	model=(--frames 1)
	variant="$world world, images"
fi
data_args+=(--context "$context")
if [ $smoke = 1 ]; then
	data_args+=(--smoke)
	data=${DEMO_DATA:-$build/bench-learn-smoke/data}
	out=${BENCH_LEARN_DIR:-$build/bench-learn-smoke}
	STEPS=${STEPS:-5}
	seeds=(${SEEDS:-1 2})
	losses=(${LOSSES:-openclip fastclip-v3})
	cells=(${CELLS:-8x2})
	jobs=${jobs:-4} # runs of seconds that mostly wait for their processes to start
else
	[ $video = 1 ] && data=$build/bench-learn-data-$world-videos-$heldout_videos ||
		data=$build/bench-learn-data-$world-images-$images-$heldout_images
	data=${DEMO_DATA:-$data}
	out=${BENCH_LEARN_DIR:-$build/bench-learn}
	seeds=(${SEEDS:-1 2 3 4 5})
	losses=(${LOSSES:-openclip fastclip-v0 fastclip-v1 fastclip-v2 fastclip-v3})
	cells=(${CELLS:-32x1 64x1 128x1 128x4})
	jobs=${jobs:-2}
fi
for c in "${cells[@]}"; do
	[[ $c =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] && [ $((BASH_REMATCH[1] % BASH_REMATCH[2])) = 0 ] ||
		{ echo "bench-learn: CELLS holds '$c', not BATCHxRANKS with the batch a multiple of the ranks" >&2; exit 2; }
done
for l in "${losses[@]}"; do
	[[ $l =~ ^(openclip|fastclip-v[0-3])$ ]] || { echo "bench-learn: LOSSES holds '$l', not openclip or fastclip-v0..v3" >&2; exit 2; }
done
samples=${SAMPLES:-25600}
precision=${PRECISION:-auto} # bf16: the CPU backend's bf16 storage (activations, weight copies)
mkdir -p "$(dirname "$data")"
tools/demo-data.sh "$data" "${data_args[@]}" >"$data.log" 2>&1 ||
	{ tail -n 5 "$data.log" >&2; echo "bench-learn: making the data in $data failed (log: $data.log)" >&2; exit 1; }
for m in train heldout; do # a cut caption loses words: the model would be asked what it cannot see
	tools/prep --info "$data/$m/manifest" | grep -q ", 0 cut at the context" ||
		{ echo "bench-learn: $data/$m has captions longer than $context tokens (prep --info)" >&2; exit 1; }
done
info=$(tools/prep --info "$data/train/manifest")
vocab=$(echo "$info" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p')
dataset=$(echo "$info" | sed -n 's/^samples *\([0-9]*\).*/\1/p')
mkdir -p "$out/runs"

# cpu_seconds FILE: the CPU seconds (user + system) of the children in FILE, what bash's times wrote
# (in the shell that waited for them: in a $(...) subshell it would count that subshell's own)
cpu_seconds() {
	tail -n 1 "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%.0f", s }'
}

# run_one LOSS BATCH RANKS SEED: trains and evaluates one run into runs/NAME/result.json (cached)
run_one() {
	local loss=$1 batch=$2 ranks=$3 seed=$4
	local name=$loss-b$batch-r$ranks-s$seed steps=${STEPS:-$(((samples + batch - 1) / batch))}
	local dir=$out/runs/$name epochs edecay warmup t0 t1 t2 line cpu
	epochs=$(((steps * batch + dataset - 1) / dataset))
	edecay=$((epochs / 2 > 0 ? epochs / 2 : 1))
	warmup=$(((steps + 9) / 10)) # a tenth of the steps, as FastCLIP's CC3M script (10k of ~100k)
	local args=(--model tiny "${model[@]}" --image-size 32 --ctx-len "$context" --vocab "$vocab" --init-seed "$seed"
		--loss "$loss" --batch-size $((batch / ranks)) --steps "$steps" --lr 2e-3 --warmup-steps "$warmup"
		--no-flip --threads 1 --log-every 1000000 --precision "$precision")
	# FastCLIP's CC3M recipe (its README's scripts, the paper's smallest data scale): γ from 1 to 0.2
	# over half the epochs; ρ 7.0 (v2), 6.5 (v3); τ as the trainer's defaults (v2 0.03 at lr 0.0133,
	# v3 lr 2e-4 and a third of it at τ <= 0.03, v0 the model's lr); FASTCLIP_ARGS adds to it
	case $loss in
	fastclip-*) args+=(--gamma-min 0.2 --gamma-decay-epochs "$edecay") ;;
	esac
	case $loss in
	fastclip-v2) args+=(--rho 7) ;;
	fastclip-v3) args+=(--rho 6.5) ;;
	esac
	[ "$loss" = openclip ] || args+=(${FASTCLIP_ARGS:-})
	local config="data $(cat "$data/params"); ranks $ranks; seed $seed; trainer ${args[*]}"
	if [ -s "$dir/result.json" ] && [ "$(cat "$dir/config" 2>/dev/null)" = "$config" ]; then
		echo "cached"
		return 0
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "$config" >"$dir/config"
	t0=$(date +%s)
	# --no-flip: the captions say left and above (videos: moves left, moves right)
	tools/launch.sh "$ranks" --manifest "$data/train/manifest" --run-dir "$dir/run" --loaders-per-node 1 --seed "$seed" \
		-- "${args[@]}" >"$dir/train.log" 2>&1 || { echo "failed: see $dir/train.log"; return 1; }
	t1=$(date +%s)
	line=$(tools/eval --manifest "$data/heldout/manifest" --ckpt "$dir/run" --match caption --json --quiet --threads 1 \
		2>"$dir/eval.log") || { echo "failed: see $dir/eval.log"; return 1; }
	t2=$(date +%s)
	times >"$dir/times"
	cpu=$(cpu_seconds "$dir/times")
	echo "{\"loss\":\"$loss\",\"seed\":$seed,\"batch\":$batch,\"ranks\":$ranks,\"steps\":$steps,\"samples\":$((steps * batch)),\"dataset\":$dataset,\"variant\":\"$variant\",\"train_s\":$((t1 - t0)),\"eval_s\":$((t2 - t1)),\"cpu_s\":$cpu,${line#\{}" >"$dir/result.tmp"
	mv "$dir/result.tmp" "$dir/result.json"
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print("t2v R@1 %.1f%%, v2t R@1 %.1f%% (train %d s, eval %d s)" % (100 * r["t2v_r1"], 100 * r["v2t_r1"], r["train_s"], r["eval_s"]))' \
		"$dir/result.json"
}

todo=()
for cell in "${cells[@]}"; do
	for loss in "${losses[@]}"; do
		for seed in "${seeds[@]}"; do todo+=("$loss ${cell%x*} ${cell#*x} $seed"); done
	done
done
n=${#todo[@]} done_runs=0 fresh=0 failed=0 stop=0 start=$(date +%s)
per_run=$([ -n "${STEPS:-}" ] && echo "$STEPS steps" || echo "$samples samples")
echo "bench-learn: $n runs (${#cells[@]} cells x ${#losses[@]} losses x ${#seeds[@]} seeds) of $per_run on $variant, $jobs at once; results in $out/runs"
# one run per job, each in its own process group (set -m) so that Ctrl-C here stops them all:
# launch.sh ends a stopped run with a checkpoint, and a run without a result is redone next time
set -m
trap 'stop=1; set +m; for p in "${pids[@]}"; do kill -TERM -- -"$p" 2>/dev/null; done' INT TERM
pids=() names=()
finish() { # finish K: waits for job K and prints its progress line
	local k=$1 st=0 msg left=""
	wait "${pids[$k]}" || st=$?
	msg=$(cat "$out/runs/${names[$k]}.msg" 2>/dev/null || true)
	rm -f "$out/runs/${names[$k]}.msg"
	done_runs=$((done_runs + 1))
	[ $st = 0 ] || failed=$((failed + 1))
	[ -n "$msg" ] || msg=$([ $stop = 1 ] && echo "stopped" || echo "failed (exit $st; see $out/runs/${names[$k]})")
	if [ "$msg" != cached ] && [ $st = 0 ]; then
		fresh=$((fresh + 1))
		left="; about $((($(date +%s) - start) * (n - done_runs) / fresh / 60)) min left at this pace"
	fi
	[[ ${names[$k]} =~ ^(.*)-b([0-9]+)-r([0-9]+)-s([0-9]+)$ ]]
	echo "bench-learn: [$done_runs/$n] ${BASH_REMATCH[1]} batch ${BASH_REMATCH[2]}, ${BASH_REMATCH[3]} rank(s), seed ${BASH_REMATCH[4]}: $msg$left"
	unset 'pids[k]' 'names[k]'
}
for item in "${todo[@]}"; do
	[ $stop = 0 ] && [ $failed = 0 ] || break
	while [ ${#pids[@]} -ge "$jobs" ]; do # wait for one to end
		wait -n "${pids[@]}" 2>/dev/null || true
		for k in "${!pids[@]}"; do kill -0 "${pids[$k]}" 2>/dev/null || finish "$k"; done
	done
	[ $stop = 0 ] && [ $failed = 0 ] || break
	set -- $item
	name=$1-b$2-r$3-s$4
	run_one "$@" >"$out/runs/$name.msg" 2>&1 &
	pids[$!]=$! names[$!]=$name
done
for k in "${!pids[@]}"; do finish "$k"; done
times >"$out/times"
echo "bench-learn: $fresh run(s) trained here in $((($(date +%s) - start + 30) / 60)) min, $((($(cpu_seconds "$out/times") + 30) / 60)) CPU-min"
[ $stop = 0 ] || { echo "bench-learn: stopped; the same command continues (finished runs are kept)" >&2; exit 130; }
[ $failed = 0 ] || { echo "bench-learn: $failed run(s) failed (see above); the others are kept" >&2; exit 1; }
results=$out/results.jsonl
for item in "${todo[@]}"; do
	set -- $item
	cat "$out/runs/$1-b$2-r$3-s$4/result.json"
done >"$results"
python3 tools/bench/learn_stats.py "$results" --markdown "$out/report.md" | tee "$out/report.txt"
