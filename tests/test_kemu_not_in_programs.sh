#!/usr/bin/env bash
# The execution shim is test machinery: no program the build makes may contain it (a program
# that resolved cudaMalloc from the shim would "run on the GPU" on the CPU without a word).
set -u
build=${BUILD:-build}
if ! grep -q '^HAVE_CUDA_EMU := 1' "$build/config.mk" 2>/dev/null; then
	echo "the shim is not built here: skipped"
	exit 77
fi
command -v nm >/dev/null || { echo "no nm: skipped"; exit 77; }
progs=0 bad=0
while IFS= read -r f; do
	head -c 4 "$f" | grep -q 'ELF' || continue
	progs=$((progs + 1))
	if nm "$f" 2>/dev/null | grep -q -e 'kemu_switch' -e 'kemu_fibers_run_block'; then
		echo "FAIL: $f contains the execution shim"
		bad=1
	fi
done < <(find . \( -path "./$build" -o -path './build*' -o -path ./.git \) -prune -o -type f -perm -u+x -print)
# and the shim's own tests do contain it, so the probe above would see it
if ! nm "$build/tests/test_kemu_barrier" 2>/dev/null | grep -q kemu_switch; then
	echo "FAIL: the probe does not find the shim even in a shim test"
	bad=1
fi
echo "$progs programs checked"
exit $bad
