#!/usr/bin/env bash
# The whole GPU check in one command of at most 8 minutes on a 16-core H200 machine, the build
# included (issue 24 §6). Stages run in order of value, each under its own time cap, and each
# writes its log and its summary row the moment it ends, so a run cut short keeps the most
# important results: facts, build, correctness, sanitize, bench-kernels, trainer, torch (STAGES).
# It builds only what the stages run, for Hopper only, and nothing that needs FFmpeg, liburing or
# libnuma: the trainer reads a ring that synthetic producers (tests/trainer_feeder) keep full.
# Logs and results go to $OUT (or build/gpu-check/); the summary table is printed last.
#
#   tools/gpu-check.sh [--dry-run] [--jobs N]      (--stage NAME: one stage alone, no cap)
#   --dry-run: the plan (each stage's cap and what it runs, the make goals) without running anything
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0") # each stage runs in a fresh bash of this file
cd "$(dirname "$0")/.." || exit 1

TOTAL_S=480 # the whole check, the build included
dry=0 only=""
jobs=$(nproc 2>/dev/null || echo 4)
while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) dry=1 ;;
	--jobs) jobs=$2; shift ;;
	--stage) only=$2; shift ;;
	-h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "gpu-check: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

logdir=${OUT:-build/gpu-check}
build=build/gpu # its own build tree, its programs under $build/root: the usual build is left alone
T=$build/tests P=$build/root
# sm_90 alone (H100, H200): one nvcc pass per file; the kernels use no sm_90a-only instruction yet
arch="-gencode arch=compute_90,code=sm_90"
make_args=(BUILD="$build" PROG_ROOT="$P/" "CUDA_ARCH=$arch")
export BUILD=$build

# name | cap in seconds | needs a GPU | what it checks | what it runs (the build stage builds it all;
# facts builds its own)
STAGES=(
	"facts|25|cpu|nvidia-smi; driver, CUDA runtime, cuBLASLt, cuDNN, NCCL: versions, files loaded|$T/gpu_facts"
	"build|120|cpu|only what the stages run, sm_90 alone; nothing that needs FFmpeg, liburing, libnuma|"
	"correctness|70|gpu|mma fragments, GEMM epilogues, attention (short list, own and cuDNN), the backend
		twins, trainer --self-check; the first failure rerun with KERN_CUDA_SYNC=1|$T/test_kemu_mma_gpu
		$T/test_kgemm_gpu $T/test_kattn_gpu $T/test_kcuda_backend_gpu $T/test_kcuda_dense_gpu
		$T/test_kcuda_embed_gpu $T/test_kcuda_loss_gpu $T/test_kcuda_optim_gpu $T/test_kcuda_step_gpu
		$T/test_kcuda_model_gpu $T/test_kcuda_train_gpu $T/test_kcuda_cls_gpu $T/test_kcuda_classify_gpu
		$P/trainer/trainer"
	"sanitize|50|gpu|compute-sanitizer, small shapes: memcheck on attention (15 s) and the model twin
		(20 s), racecheck on attention (15 s)|$T/test_kattn_gpu $T/test_kcuda_model_gpu"
	"bench-kernels|40|gpu|the roofline table, own attention over cuDNN's, the shapes cuDNN refuses
		(--attention auto's fallbacks)|$T/bench_kernels"
	"trainer|75|gpu|vit-b16 T=4, batch <= 128, 20 steps on a ring kept full by synthetic producers,
		--attention auto and own: clips/s, MFU, peak memory|$T/bench_gpu_peak $P/trainer/trainer
		$P/tools/ringctl $T/trainer_feeder"
	"torch|100|gpu|PyTorch on the same model and batch: eager (30 s), torch.compile (60 s)|$P/trainer/trainer"
)
field() { # field STAGE-LINE N: the Nth |-separated field, whitespace folded
	local f
	IFS='|' read -r -d '' -a f <<<"$1"
	echo ${f[$2]:-} # unquoted: folds the table's line breaks
}
stage_line() {
	local s
	for s in "${STAGES[@]}"; do [ "$(field "$s" 0)" = "$1" ] && { echo "$s"; return; }; done
}
# the build stage's make goals: everything the later stages run, once each
goals() {
	local s
	for s in "${STAGES[@]}"; do
		[ "$(field "$s" 0)" = facts ] || field "$s" 4
	done | tr ' ' '\n' | sed '/^$/d' | awk '!seen[$0]++' | tr '\n' ' '
}

# ---- the stages: each gets what it runs as its arguments; the last line it prints is its note
stage_facts() { # gpu_facts
	echo "== nvidia-smi"
	timeout 15 nvidia-smi || echo "nvidia-smi: not found or failed"
	timeout 10 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv 2>/dev/null
	echo "== tools"
	nvcc --version 2>/dev/null | tail -n 1
	compute-sanitizer --version 2>/dev/null | head -n 1
	echo "== build configuration (mk/detect.sh: where cuDNN and NCCL were found) and $1"
	make --no-print-directory "${make_args[@]}" -j"$jobs" "$1" >"$logdir/facts-make.log" 2>&1 ||
		{ tail -n 20 "$logdir/facts-make.log"; echo "building $1 failed (see facts-make.log)"; return 1; }
	awk '/^configuration/ { on = 1; print; next } on && /^  / { print; next } { on = 0 }' "$logdir/facts-make.log"
	grep -E '^(HAVE_(CUDART|CUBLAS|CUDNN|NCCL)|(CUDNN|NCCL)_LIBS) ' "$build/config.mk"
	"$1"
}

stage_build() { # (what the later stages run: goals)
	# shellcheck disable=SC2046
	make --no-print-directory "${make_args[@]}" -j"$jobs" $(goals) || return 1
	echo "built $(goals | wc -w) programs in $build for $arch with -j$jobs"
}

# The CUDA backend against its CPU twin from the tests' logs: the worst relative L2 per storage
# type over every named tensor, and whether the two-run bit-identity checks held
twins() {
	awk '
	/ rel L2 / { for (i = 1; i <= NF; i++) if ($i == "L2") { v = $(i + 1) + 0; t = $(i - 2) }
		n++; if (v > worst[t]) worst[t] = v }
	/same bits|bit for bit/ { runs++; if ($1 == "ok") same++ }
	END { printf "twins: %d comparisons, worst rel L2 bf16 %.1e f32 %.1e, %d/%d two-run bit checks identical\n",
		n, worst["bf16"], worst["f32"], same, runs }' "$@"
}
stage_correctness() { # the device tests, then the trainer's self-check
	local trainer=${!#} t name rc n=0 bad=0 skip=0 first="" d=$logdir/correctness quick
	mkdir -p "$d"
	for t in "${@:1:$#-1}"; do
		name=${t##*/}
		# attention: the small shapes, own kernel and cuDNN (the full list is make test-gpu's)
		quick=$([ "$name" = test_kattn_gpu ] && echo KT_QUICK=cudnn)
		env $quick timeout 30 "$t" >"$d/$name.log" 2>&1
		rc=$?
		n=$((n + 1))
		case $rc in
		0) echo "PASS $name" ;;
		77) echo "SKIP $name: $(tail -n 1 "$d/$name.log")"; skip=$((skip + 1)) ;;
		*)
			bad=$((bad + 1))
			echo "FAIL $name (exit $rc): $(tail -n 3 "$d/$name.log")"
			if [ -z "$first" ]; then # the first failure again, each op waited for, so the fault names its op
				first=$name
				env KERN_CUDA_SYNC=1 $quick timeout 20 "$t" >"$d/$name.sync.log" 2>&1
				echo "  rerun with KERN_CUDA_SYNC=1 (exit $?): $(tail -n 2 "$d/$name.sync.log")"
			fi
			;;
		esac
	done
	grep -h '^worst' "$d/test_kattn_gpu.log" 2>/dev/null | sed 's/^/attention: /'
	twins "$d"/test_kcuda_*_gpu.log
	if "$trainer" --help 2>&1 | grep -q -e '--self-check'; then
		timeout 30 "$trainer" --self-check --backend cuda >"$d/self-check.log" 2>&1
		rc=$?
		echo "trainer --self-check: exit $rc: $(tail -n 1 "$d/self-check.log")"
		n=$((n + 1))
		[ $rc = 0 ] || bad=$((bad + 1))
	else
		echo "trainer --self-check: not in this trainer (issue 24 §4)"
	fi
	echo "$((n - bad - skip)) passed, $bad failed, $skip skipped of $n checks${first:+ (first failure $first: KERN_CUDA_SYNC=1 rerun in correctness/$first.sync.log)}; $(twins "$d"/test_kcuda_*_gpu.log)"
	[ $bad = 0 ] || return 1
	[ $skip -lt $n ] || return 77
}

stage_sanitize() { # memcheck on attention and the model twin, racecheck on attention (small shapes)
	local attn=$1 model=$2 san rc bad=0 notes=()
	san=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
	[ -x "$san" ] || { echo "compute-sanitizer not found (the CUDA toolkit's cuda-sanitizer package)"; return 77; }
	one() { # one TOOL SECONDS PROGRAM: KT_QUICK=1: the own kernel on small shapes (cuDNN's plans are slow there)
		echo "== $1 ${3##*/} (at most $2 s)"
		KT_QUICK=1 timeout "$2" "$san" --tool "$1" --error-exitcode 99 "$3" 2>&1 | tail -n 30
		rc=${PIPESTATUS[0]}
		case $rc in
		0 | 77) notes+=("$1 ${3##*/} clean") ;;
		99) notes+=("$1 ${3##*/} FOUND ERRORS"); bad=1 ;;
		124) notes+=("$1 ${3##*/} timed out"); bad=1 ;;
		*) notes+=("$1 ${3##*/} exit $rc"); bad=1 ;;
		esac
	}
	one memcheck 15 "$attn"
	one memcheck 20 "$model"
	one racecheck 15 "$attn"
	(IFS=';'; echo "${notes[*]}")
	return $bad
}

stage_bench_kernels() { # the roofline table, own attention against cuDNN's, the shapes cuDNN refuses
	local out rc
	out=$(timeout 40 "$1" 2>&1)
	rc=$?
	echo "$out"
	[ $rc = 0 ] || { echo "bench_kernels: exit $rc"; return $rc; }
	# "attn own fwd vit-b16 T=4      1.234 ms   456.7 TFLOP/s": own over cuDNN per pass and shape
	# (own-atomic: the backward with dQ by atomics); a shape cuDNN refuses is one that
	# --attention auto runs on the own kernel (a fallback); then bench_kernels' line on the own
	# kernels' target (>= 0.8 x cuDNN at hd 64, 785 and 3137 tokens)
	{
		awk '
		match($0, /^attn (own|own-atomic|cudnn) (fwd|bwd) /) {
			split(substr($0, 1, RLENGTH - 1), w, " "); rest = substr($0, RLENGTH + 1)
			n = split(rest, f, " "); shape = f[1]; for (i = 2; i <= n - 4; i++) shape = shape " " f[i]
			rate[w[2] " " w[3] " " shape] = f[n - 1]; if (w[2] == "own") order[++k] = w[3] " " shape
		}
		/^attention cudnn .*: not run/ { refused++ }
		/^attention: cuDNN not in this build/ { nocudnn = 1 }
		END {
			line = "own vs cuDNN:"
			for (i = 1; i <= k; i++) if ((c = rate["cudnn " order[i]]) > 0) {
				line = line sprintf(" %s %.2f", order[i], rate["own " order[i]] / c)
				if ((a = rate["own-atomic " order[i]]) > 0) line = line sprintf(" (atomic dQ %.2f)", a / c)
				line = line ";"
			}
			print line
			shapes = k / 2
			if (nocudnn) print "fallbacks: cuDNN unusable, --attention auto runs the own kernel on all " shapes " shapes"
			else printf "fallbacks: cuDNN refused %d of %d attention shapes (auto runs the own kernel there)\n", refused, shapes
		}' <<<"$out"
		grep '^attention target' <<<"$out" || echo "attention target: bench_kernels printed no target line"
	} | tee "$logdir/bench-kernels.attn.txt"
	local gemm copy
	gemm=$(sed -n 's/^cuBLASLt bf16 GEMM 8192^3 .* \([0-9.]*\) TFLOP\/s$/\1/p' <<<"$out")
	copy=$(sed -n 's/^copy (device to device) .* \([0-9.]*\) GB\/s$/\1/p' <<<"$out")
	echo "GEMM ${gemm:-?} TFLOP/s, copy ${copy:-?} GB/s; $(tr '\n' ' ' <"$logdir/bench-kernels.attn.txt")"
}

# the trainer at vit-b16, T = 4, 224 px (the preset), bf16, FastCLIP-v3, on a ring that synthetic
# producers keep full: compute alone, no decoder. At most this batch (trainer query fit-batch says less
# when it does not fit); the PyTorch stage reuses it.
TRAIN_STEPS=20 TRAIN_MAX_BATCH=128
stage_trainer() { # the matmul peak (for MFU), then --attention auto and own
	local peak_bin=$1 trainer=$2 ringctl=$3 feeder=$4 peak B geom attn
	local model=(--model vit-b16 --precision bf16 --backend cuda --loss fastclip-v3 --dataset-size 100000)
	peak=$(timeout 10 "$peak_bin" 2>&1 | tail -n 1)
	echo "matmul peak: $peak"
	peak=$(sed -n 's/.*"tflops": *\([0-9.]*\).*/\1/p' <<<"$peak")
	B=$(timeout 10 "$trainer" query fit-batch "${model[@]}" --batch-size $TRAIN_MAX_BATCH 2>"$logdir/trainer-fit.log")
	[ "${B:-x}" -gt 0 ] 2>/dev/null || { echo "trainer query fit-batch: ${B:-no batch}: $(tail -n 2 "$logdir/trainer-fit.log")"; return 1; }
	geom=$("$trainer" query geometry "${model[@]}") || return 1
	echo "batch $B (at most $TRAIN_MAX_BATCH), $TRAIN_STEPS steps; ring geometry $geom"
	# the producers, the ring and the run folders (a checkpoint at the end) go when the stage ends,
	# cut at its cap too
	gc_tmp=$(mktemp -d /tmp/gpu-check.XXXXXX) gc_pids=""
	trap '[ -n "$gc_pids" ] && kill $gc_pids 2>/dev/null; "'"$ringctl"'" destroy --ring gc$$ >/dev/null 2>&1; rm -rf "$gc_tmp"' EXIT
	trap 'exit 143' TERM INT
	local tmp=$gc_tmp
	: >"$logdir/trainer.jsonl"
	for attn in auto own; do
		# shellcheck disable=SC2086
		"$ringctl" create --ring gc$$ $geom --ranks 1 --slots $((4 * B)) --replace >/dev/null || return 1
		for _ in $(seq "$(($(nproc) / 2 < 8 ? $(nproc) / 2 : 8))"); do
			"$feeder" --ring gc$$ --dataset-size 100000 --vocab 49408 2>/dev/null &
			gc_pids+=" $!"
		done
		sleep 2 # the ring fills (4 B slots) while the trainer starts
		timeout 25 "$trainer" --ring gc$$ "${model[@]}" --attention $attn --batch-size "$B" --steps $TRAIN_STEPS \
			${peak:+--peak-tflops "$peak"} --metrics-every 1 --log-every 10 --run-dir "$tmp/$attn" \
			>"$logdir/trainer-$attn.log" 2>&1 || echo "trainer --attention $attn: exit $?: $(tail -n 2 "$logdir/trainer-$attn.log")"
		# shellcheck disable=SC2086
		kill $gc_pids 2>/dev/null
		wait 2>/dev/null
		gc_pids=""
		"$ringctl" destroy --ring gc$$ >/dev/null 2>&1
		# medians over the steps after the first 5 (warm-up: cuBLASLt heuristics, cuDNN plans)
		awk -v attn=$attn -v B="$B" -F'[,{}]' '
		{ for (i = 1; i <= NF; i++) { split($i, kv, ":"); gsub(/[" ]/, "", kv[1]); v[kv[1]] = kv[2] }
		  if (v["step"] > 5) { n++; cps[n] = v["samples_per_s"]; mfu[n] = v["mfu"]; ms[n] = v["step_s"] * 1000 }
		  if (v["mem_peak_bytes"] > peak) peak = v["mem_peak_bytes"] }
		function med(a, m, i, j, t) { for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		  return a[int((m + 1) / 2)] }
		END { if (!n) exit 1
		  printf "{\"impl\": \"avclip\", \"attention\": \"%s\", \"preset\": \"vit-b16\", \"batch\": %d, \"frames\": 4, \"image_size\": 224, \"loss\": \"fastclip-v3\", \"clips_per_s\": %s, \"step_ms\": %.1f, \"mfu\": %s, \"peak_mem_gib\": %.2f}\n",
		    attn, B, med(cps, n), med(ms, n), med(mfu, n), peak / 1073741824 }' "$tmp/$attn/metrics.jsonl" 2>/dev/null |
			tee -a "$logdir/trainer.jsonl"
		rm -rf "${tmp:?}/$attn" # the final checkpoint
	done
	[ -s "$logdir/trainer.jsonl" ] || { echo "no trainer run reported a step"; return 1; }
	sed 's/.*"attention": "\([a-z]*\)".*"clips_per_s": \([0-9.]*\).*"mfu": \([^,]*\).*"peak_mem_gib": \([0-9.]*\).*/\1 \2 clips\/s MFU \3 peak \4 GiB/' \
		"$logdir/trainer.jsonl" | paste -sd ';' | sed "s/^/B=$B: /"
	[ "$(wc -l <"$logdir/trainer.jsonl")" = 2 ]
}

stage_torch() { # PyTorch eager, then torch.compile, on the same model and batch as the trainer's
	local trainer=$1 B py=${PYTHON:-python3} mode out rc notes=() t compile
	B=$(sed -n 's/.*"batch": \([0-9]*\).*/\1/p' "$logdir/trainer.jsonl" 2>/dev/null | head -n 1)
	B=${B:-$TRAIN_MAX_BATCH}
	"$py" -c 'import torch, sys; print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version()); sys.exit(0 if torch.cuda.is_available() else 77)' ||
		{ echo "no PyTorch with a GPU in $py"; return 77; }
	: >"$logdir/torch.jsonl"
	for mode in eager compile; do
		t=30 compile=()
		[ $mode = compile ] && t=60 compile=(--compile)
		out=$(timeout $t "$py" tools/bench/torch_clip.py --device cuda --preset vit-b16 --loss fastclip-v3 \
			--batch-size "$B" --steps $TRAIN_STEPS --trainer "$trainer" "${compile[@]}" \
			2>"$logdir/torch-$mode.err")
		rc=$?
		echo "== $mode (exit $rc)"
		tail -n 5 "$logdir/torch-$mode.err"
		echo "$out"
		if [ $rc = 0 ]; then
			tail -n 1 <<<"$out" | tee -a "$logdir/torch.jsonl" >/dev/null
			notes+=("$mode $(tail -n 1 <<<"$out" | sed -n 's/.*"clips_per_s": \([0-9.]*\).*/\1/p') clips/s")
		else
			notes+=("$mode $([ $rc = 124 ] && echo "timed out after ${t}s" || echo "exit $rc")")
		fi
	done
	local ours
	ours=$(sed -n '/"attention": "auto"/s/.*"clips_per_s": \([0-9.]*\).*/\1/p' "$logdir/trainer.jsonl" 2>/dev/null)
	(IFS=';'; echo "B=$B: ${notes[*]}${ours:+; avclip auto $ours clips/s}")
	[ -s "$logdir/torch.jsonl" ]
}

if [ -n "$only" ]; then
	line=$(stage_line "$only")
	[ -n "$line" ] || { echo "gpu-check: no stage $only" >&2; exit 2; }
	mkdir -p "$logdir"
	# shellcheck disable=SC2046
	"stage_${only//-/_}" $(field "$line" 4)
	exit $?
fi

if [ $dry = 1 ]; then
	sum=0
	for s in "${STAGES[@]}"; do sum=$((sum + $(field "$s" 1))); done
	echo "gpu-check plan: ${#STAGES[@]} stages, caps ${sum} s in all (at most $TOTAL_S s); logs in $logdir"
	printf '  %-14s %5s  %-3s  %s\n' stage cap GPU "what it checks / runs: the programs it runs (built by the build stage)"
	for s in "${STAGES[@]}"; do
		runs=$(field "$s" 4)
		[ "$(field "$s" 0)" = build ] && runs="make -j$jobs BUILD=$build PROG_ROOT=$P/ CUDA_ARCH='$arch' (the goals below)"
		printf '  %-14s %4ss  %-3s  %s\n' "$(field "$s" 0)" "$(field "$s" 1)" "$(field "$s" 2)" "$(field "$s" 3)"
		printf '  %-14s %5s  %-3s  runs: %s\n' "" "" "" "$runs"
	done
	echo "build goals: $(goals)"
	exit 0
fi

mkdir -p "$logdir"
: >"$logdir/rows.txt"
rows=() failed=0 gpu="" start_all=$(date +%s)
summary() {
	{
		echo
		echo "gpu-check ($(date -u +%Y-%m-%dT%H:%MZ), $(($(date +%s) - start_all)) s, logs in $logdir)"
		printf '%-14s %-5s %5s  %s\n' stage result time note
		printf '%s\n' "${rows[@]}"
	} | tee "$logdir/summary.txt"
}
trap 'summary; exit 130' INT TERM
for s in "${STAGES[@]}"; do
	name=$(field "$s" 0) cap=$(field "$s" 1) need=$(field "$s" 2)
	log=$logdir/$name.log
	left=$((start_all + TOTAL_S - 5 - $(date +%s))) # 5: timeout's grace before its KILL
	[ "$cap" -gt "$left" ] && cap=$left
	if [ "$need" = gpu ] && [ -z "$gpu" ]; then
		grep -q '^device .*sm_' "$logdir/facts.log" 2>/dev/null || nvidia-smi -L 2>/dev/null | grep -q '^GPU' && gpu=yes || gpu=no
	fi
	status=SKIP
	if [ "$need" = gpu ] && [ "$gpu" = no ]; then
		rows+=("$(printf '%-14s %-5s %5s  %s' "$name" SKIP - "no GPU (nvidia-smi and the CUDA runtime see none)")")
	elif [ "$cap" -lt 5 ]; then
		rows+=("$(printf '%-14s %-5s %5s  %s' "$name" SKIP - "no time left of the $TOTAL_S s")")
	else
		echo "gpu-check: $name (at most ${cap}s) ..."
		t0=$(date +%s)
		timeout -k 5 "$cap" bash "$self" --jobs "$jobs" --stage "$name" >"$log" 2>&1
		rc=$?
		dur=$(($(date +%s) - t0))
		case $rc in
		0) status=PASS note=$(tail -n 1 "$log") ;;
		77) status=SKIP note=$(tail -n 1 "$log") ;;
		124 | 137) status=FAIL note="cut at its cap of ${cap}s; $(tail -n 1 "$log")" failed=1 ;;
		*) status=FAIL note="exit $rc: $(tail -n 1 "$log")" failed=1 ;;
		esac
		rows+=("$(printf '%-14s %-5s %4ss  %s' "$name" "$status" "$dur" "${note:0:160}")")
	fi
	printf '%s\n' "${rows[-1]}" >>"$logdir/rows.txt" # written as each stage ends: a cut run keeps them
	if [ "$name" = build ] && [ "$status" = FAIL ]; then
		echo "gpu-check: the build failed, see $log"
		break
	fi
done
summary
exit $failed
