#!/usr/bin/env bash
# Every own kernel nvcc compiled in this build, for every target arch, keeps its registers:
# ptxas's resource reports (next to each object) show no spill stores or loads. A kernel built
# to spill proves the check fails when it should.
set -u
build=${BUILD:-build}
nvcc=$(sed -n 's/^NVCC := //p' "$build/config.mk" 2>/dev/null)
if ! grep -q '^HAVE_NVCC := 1' "$build/config.mk" 2>/dev/null || [ -z "$nvcc" ]; then
	echo "no nvcc in this build: skipped"
	exit 77
fi
mapfile -t reports < <(find "$build/obj" -name '*.cu.o.ptxas' | sort)
if [ ${#reports[@]} -eq 0 ]; then
	echo "FAIL: no ptxas reports under $build/obj although nvcc is configured (run make first)"
	exit 1
fi
fail=0
for arch in sm_80 sm_86 sm_89 sm_90; do
	if ! grep -q "code=$arch" "${reports[0]}"; then
		echo "FAIL: the build's CUDA_ARCH lacks $arch ($(head -n 1 "${reports[0]}"))"
		fail=1
	fi
done
kernels=$(grep -h 'Compiling entry function' "${reports[@]}" | sed "s/.*function '\([^']*\)'.*/\1/" | sort -u | wc -l)
if ! bash mk/ptxas-spills.sh "${reports[@]}"; then
	echo "FAIL: a kernel above spills to local memory or misses an arch"
	fail=1
else
	echo "${#reports[@]} objects, $kernels kernels: no spills, every kernel built for every arch"
fi

# the check itself: a kernel squeezed into 16 registers spills, and is named with its arch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# arch: -gencode arch=compute_80,code=sm_80" >"$tmp/probe.cu.o.ptxas"
if ! "$nvcc" -gencode arch=compute_80,code=sm_80 -maxrregcount=16 -Xptxas -v -c tests/spill_probe.cu \
	-o "$tmp/probe.cu.o" 2>>"$tmp/probe.cu.o.ptxas"; then
	cat "$tmp/probe.cu.o.ptxas"
	echo "FAIL: the spill probe does not compile"
	exit 1
fi
if out=$(bash mk/ptxas-spills.sh "$tmp/probe.cu.o.ptxas"); then
	echo "FAIL: the spilling probe kernel passed the check"
	fail=1
elif ! grep -q 'spill_probe.*(sm_80) spills' <<<"$out"; then
	echo "FAIL: the check did not name the probe kernel and its arch: $out"
	fail=1
else
	echo "the check catches a spilling kernel: $out"
fi
exit $fail
