#!/usr/bin/env bash
# The whole GPU check in one command: build what the GPU needs (without FFmpeg, liburing or
# libnuma when their development packages are missing), run make test-gpu, compute-sanitizer's
# memcheck and racecheck on the kernel tests, attention against the CPU reference, and make
# bench-kernels. Full logs go to $OUT (or build/gpu-check/); a short table is printed last.
#
#   tools/gpu-check.sh [--dry-run] [--jobs N]
#   (one step alone: --sanitize memcheck|racecheck, --twins)
#
# Steps are one line each in STEPS below (name, time limit in seconds, whether it needs a GPU,
# command); later work adds its own lines (attention, the trainer, the PyTorch comparison).
set -u
cd "$(dirname "$0")/.." || exit 1

dry=0 tool=""
jobs=$(nproc 2>/dev/null || echo 4)
while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) dry=1 ;;
	--sanitize) tool=$2; shift ;; # one step: compute-sanitizer --tool TOOL on the kernel tests
	--twins) tool=twins ;;        # one step: the CUDA backend's twin tests summed up from test-gpu's logs
	--jobs) jobs=$2; shift ;;
	-h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "gpu-check: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

logdir=${OUT:-build/gpu-check}
build=build/gpu # its own build tree: its configuration does not disturb the usual one
mkdir -p "$logdir"
export BUILD=$build

# the kernel tests compute-sanitizer checks (GPU_SANITIZE_TESTS), one per line
kernel_tests() { make -s --no-print-directory BUILD="$build" list-gpu-sanitize-tests | tail -n 1 | tr ' ' '\n'; }

sanitizer=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
# compute-sanitizer TOOL on every kernel test; a test that skips (77) counts as passed
sanitize() {
	local tool=$1 rc=0 t
	if [ ! -x "$sanitizer" ]; then
		echo "compute-sanitizer not found (it ships with the CUDA toolkit: the cuda-sanitizer package)"
		return 77
	fi
	local n=0
	for t in $(kernel_tests); do
		echo "== $tool: $t"
		# KT_QUICK: kernel tests with long shape lists (test_kattn_gpu) take their small ones
		KT_QUICK=1 "$sanitizer" --tool "$tool" --error-exitcode 99 "$t"
		local r=$?
		n=$((n + 1))
		[ $r = 0 ] || [ $r = 77 ] || { echo "== $tool FAILED on $t (exit $r)"; rc=1; }
	done
	[ $rc = 0 ] && echo "$tool: $n kernel tests clean"
	return $rc
}

# The CUDA backend against its CPU twin, from the logs make test-gpu left: the worst relative L2
# per storage type over every named tensor, and whether the two-run bit-identity checks held.
twins() {
	local logs=("$build"/test-logs/test_kcuda_*_gpu.log)
	[ -e "${logs[0]}" ] || { echo "no test_kcuda_*_gpu logs under $build/test-logs: run the test-gpu step first"; return 1; }
	awk '
	/ rel L2 / { for (i = 1; i <= NF; i++) if ($i == "L2") { v = $(i + 1) + 0; t = $(i - 2) }
		n++; if (v > worst[t]) worst[t] = v }
	/^FAIL/ { bad++ }
	/same bits/ { runs++; if ($1 == "ok") same++ }
	/skipped/ { skips++ }
	END {
		printf "%d twin comparisons, worst rel L2 bf16 %.2e f32 %.2e; %d/%d two-run bit checks identical; %d failed checks%s\n",
		       n, worst["bf16"], worst["f32"], same, runs, bad, skips ? "; a test skipped (see its log)" : ""
		exit bad > 0
	}' "${logs[@]}"
}

if [ "$tool" = twins ]; then
	twins
	exit $?
elif [ -n "$tool" ]; then
	sanitize "$tool"
	exit $?
fi

# name | seconds | needs a GPU (gpu/cpu) | command (its last output line is the table's note)
# The limits add up to about 11 minutes; on a 16-core H200 host the whole check should take ~4
# (the attention step repeats test_kattn_gpu of test-gpu so that its worst errors are the note).
STEPS=(
	"build|240|cpu|make -j$jobs BUILD=$build all && echo built in $build"
	"test-gpu|90|gpu|make BUILD=$build test-gpu"
	"cuda-twins|5|gpu|bash tools/gpu-check.sh --twins"
	"memcheck|60|gpu|bash tools/gpu-check.sh --sanitize memcheck"
	"racecheck|60|gpu|bash tools/gpu-check.sh --sanitize racecheck"
	"attention|120|gpu|out=\$($build/tests/test_kattn_gpu 2>&1); rc=\$?; echo \"\$out\"; grep '^worst' <<<\"\$out\"; exit \$rc"
	"bench-gpu|420|gpu|make BUILD=$build bench-gpu"
	"bench-kernels|120|gpu|make -s BUILD=$build bench-kernels"
)

have_gpu() {
	if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
		return 0
	fi
	# no nvidia-smi: ask the CUDA runtime through a built device test (77 = no device)
	local probe=$build/tests/test_kemu_barrier_gpu
	[ -x "$probe" ] && { "$probe" >/dev/null 2>&1; [ $? != 77 ]; }
}

if [ $dry = 1 ]; then
	echo "gpu-check plan (logs in $logdir, build tree $build):"
	for s in "${STEPS[@]}"; do
		IFS='|' read -r name secs need cmd <<<"$s"
		printf '  %-14s %4ss  %-3s  %s\n' "$name" "$secs" "$need" "$cmd"
	done
	exit 0
fi

rows=() failed=0 gpu=""
for s in "${STEPS[@]}"; do
	IFS='|' read -r name secs need cmd <<<"$s"
	log=$logdir/$name.log
	if [ "$need" = gpu ]; then
		[ -n "$gpu" ] || { have_gpu && gpu=yes || gpu=no; }
		if [ "$gpu" = no ]; then
			echo "no GPU on this machine: $name skipped" >"$log"
			rows+=("$(printf '%-14s %-5s %6s  %s' "$name" SKIP - "no GPU (nvidia-smi and the CUDA runtime see none)")")
			continue
		fi
	fi
	echo "gpu-check: $name ..."
	start=$(date +%s)
	timeout -k 10 "$secs" bash -c "$cmd" >"$log" 2>&1
	rc=$?
	dur=$(($(date +%s) - start))
	case $rc in
	0) status=PASS note=$(tail -n 1 "$log") ;;
	77) status=SKIP note=$(tail -n 1 "$log") ;;
	124 | 137) status=FAIL note="timed out after ${secs}s" failed=1 ;;
	*) status=FAIL note="exit $rc, see $log" failed=1 ;;
	esac
	rows+=("$(printf '%-14s %-5s %5ss  %s' "$name" "$status" "$dur" "${note:0:100}")")
	[ "$name" = build ] && [ $rc != 0 ] && { echo "gpu-check: the build failed, see $log"; break; }
done

{
	echo
	echo "gpu-check ($(date -u +%Y-%m-%dT%H:%MZ), logs in $logdir)"
	[ -f "$logdir/bench-kernels.log" ] && grep -h -e '^device:' -e '^ratios:' "$logdir/bench-kernels.log"
	[ -f "$logdir/attention.log" ] && grep -h -e '^worst' -e '^cuDNN\|^auto\|^cudnn:' "$logdir/attention.log"
	printf '%-14s %-5s %6s  %s\n' step result time note
	printf '%s\n' "${rows[@]}"
} | tee "$logdir/summary.txt"
exit $failed
