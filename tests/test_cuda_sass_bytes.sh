#!/usr/bin/env bash
# Every own kernel object of this build (kernels/cuda, attention, examples), every arch: no 1-byte
# global loads or stores (LDG/STG/generic LD/ST/atomics .U8/.S8 in cuobjdump -sass), which is what a
# memcpy into a bf16 * compiles to. Allowed, by kernel and count per arch, where a byte is the data
# or one bit of a flags word: ALLOW below. A probe kernel with such a memcpy proves the check fails.
# Skips (77) without nvcc or without cuobjdump and nvdisasm (CUOBJDUMP=path, else next to nvcc,
# else on PATH, else the pair the triton wheel of $AVCLIP_PYTHON ships: the interop venv's torch
# brings it, so CI runs this where its toolkit lacks them).
set -u
build=${BUILD:-build}
nvcc=$(sed -n 's/^NVCC := //p' "$build/config.mk" 2>/dev/null)
if ! grep -q '^HAVE_NVCC := 1' "$build/config.mk" 2>/dev/null || [ -z "$nvcc" ]; then
	echo "no nvcc in this build: skipped"
	exit 77
fi
cuobjdump=${CUOBJDUMP:-$(dirname "$nvcc")/cuobjdump}
[ -x "$cuobjdump" ] || cuobjdump=$(command -v cuobjdump || true)
if [ -z "$cuobjdump" ] && [ -n "${AVCLIP_PYTHON:-}" ]; then
	site=$("$AVCLIP_PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null || true)
	[ -x "$site/triton/backends/nvidia/bin/cuobjdump" ] && cuobjdump=$site/triton/backends/nvidia/bin/cuobjdump
fi
if [ -z "$cuobjdump" ] || ! PATH="$(dirname "$cuobjdump"):$PATH" command -v nvdisasm >/dev/null; then
	echo "no cuobjdump with nvdisasm (the toolkit's, or CUOBJDUMP=): skipped"
	exit 77
fi
export PATH="$(dirname "$cuobjdump"):$PATH"
# kernel (mangled-name regex) and the most 1-byte global accesses it may have per arch, and why
ALLOW=(
	'augment_kernel 32' # its input is the u8 clip bytes (3 channels a pixel)
	'target_kernel 16'  # VideoMAE's target: one channel of a tubelet's u8 pixels a thread (kcu_mae.cu)
	'norm_chunks_kernel 2' # a bit of a segment's flags word: the compiler loads its byte, once a block
	'update_kernel 2'
	'lamb_kernel 2'
)
# per object and arch: "FUNCTION COUNT" of 1-byte global accesses
bytes_of() {
	"$cuobjdump" -sass "$1" | awk '
		/code for sm_/ { arch = $NF }
		/Function :/ { fn = $3 }
		/(LDG|STG|ATOMG|RED|ATOM|LD|ST)(\.[A-Z0-9_]+)*\.(U8|S8)[ ;]/ && !/(LDS|STS|LDL|STL)/ { n[arch " " fn]++ }
		END { for (k in n) print k, n[k] }'
}
allowed() { # fn count
	local a
	for a in "${ALLOW[@]}"; do
		set -- "$1" "$2" $a
		[[ $1 =~ $3 ]] && [ "$2" -le "$4" ] && return 0
	done
	return 1
}
mapfile -t objs < <(find "$build/obj/kernels" -name '*.cu.o' | sort)
if [ ${#objs[@]} -eq 0 ]; then
	echo "FAIL: no kernel objects under $build/obj/kernels although nvcc is configured (run make first)"
	exit 1
fi
fail=0
for o in "${objs[@]}"; do
	if ! "$cuobjdump" -sass "$o" >/dev/null 2>&1; then
		echo "FAIL: cuobjdump -sass $o failed"
		fail=1
		continue
	fi
	while read -r arch fn n; do
		allowed "$fn" "$n" && continue
		echo "FAIL: $o: $fn ($arch) has $n 1-byte global accesses"
		fail=1
	done < <(bytes_of "$o")
done
[ $fail = 0 ] && echo "${#objs[@]} kernel objects: no 1-byte global accesses beyond the allowed"

# the check itself: the probe's memcpy into bf16 * compiles to byte stores, and is named
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$nvcc" -gencode arch=compute_80,code=sm_80 -c tests/sass_u8_probe.cu -o "$tmp/probe.cu.o"; then
	echo "FAIL: the byte probe does not compile"
	exit 1
fi
if ! bytes_of "$tmp/probe.cu.o" | grep -q u8_probe; then
	echo "FAIL: the probe's byte stores were not seen: $("$cuobjdump" -sass "$tmp/probe.cu.o" | grep -c STG)"
	fail=1
else
	echo "the check catches byte accesses: $(bytes_of "$tmp/probe.cu.o")"
fi
exit $fail
