#!/usr/bin/env bash
# The shim holds own kernels to the dialect (DESIGN §8): what is outside it does not compile for
# the shim, so `make test` stops a kernel that uses it on every machine. A kernel using every
# element of the dialect compiles.
set -u
build=${BUILD:-build}
if ! grep -q '^HAVE_CUDA_EMU := 1' "$build/config.mk" 2>/dev/null; then
	echo "the shim is not built here: skipped"
	exit 77
fi
cxx=$(sed -n 's/^CXX := //p' "$build/config.mk")
flags=$(sed -n 's/^CUDA_EMU_CFLAGS := //p' "$build/config.mk")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# compile NAME EXPECT(ok|fail) PATTERN BODY [MODE]: BODY goes inside a kernel; MODE -c assembles too
compile() {
	local name=$1 expect=$2 pattern=$3 body=$4 mode=${5:--fsyntax-only}
	printf '#include "kcuda.h"\n#include "kmma.h"\n__global__ void k(float *f, int *i, unsigned *u)\n{\n%s\n}\n' \
		"$body" >"$tmp/$name.cu"
	# shellcheck disable=SC2086
	"$cxx" -std=c++17 "$mode" -o "$tmp/$name.o" -Wall -Wextra -Werror -Wno-unused-parameter -DKEMU=1 $flags -Ikernels/cuda -x c++ "$tmp/$name.cu" \
		>"$tmp/$name.log" 2>&1
	local rc=$?
	if [ "$expect" = ok ] && [ $rc -ne 0 ]; then
		echo "FAIL: $name should compile:"
		head -n 20 "$tmp/$name.log"
		return 1
	elif [ "$expect" = fail ] && { [ $rc -eq 0 ] || ! grep -q -e "$pattern" "$tmp/$name.log"; }; then
		echo "FAIL: $name should not compile for the shim (expected '$pattern'):"
		head -n 20 "$tmp/$name.log"
		return 1
	fi
	echo "ok: $name $( [ "$expect" = ok ] && echo compiles || echo "is refused ($pattern)")"
}

fail=0
compile dialect ok '' '
	__shared__ float s[64];
	KSHARED_DYN(float, dyn);
	int t = threadIdx.x + blockIdx.x * blockDim.x + gridDim.x;
	s[t % 64] = dyn[t] + __expf(f[t]) + rsqrtf(2.0f) + erff(1.0f) + fmaxf(1.0f, 2.0f) + __saturatef(f[0]);
	__syncthreads();
	float v = __shfl_sync(0xffffffffu, s[0], 1) + __shfl_xor_sync(0xffffffffu, 1.0f, 2) +
		  __shfl_up_sync(0xffffffffu, 1.0f, 1) + __shfl_down_sync(0xffffffffu, 1.0f, 1);
	__syncwarp();
	u[0] = __ballot_sync(0xffffffffu, v > 0) + __all_sync(0xffffffffu, 1) + __any_sync(0xffffffffu, 0);
	atomicAdd(i, 1), atomicMax(i, 2), atomicOr(u, 4u);
	float4 q = reinterpret_cast<const float4 *>(f)[0];
	__nv_bfloat16 b = __float2bfloat16(q.x);
	KFragA a; KFragB fb; KFragC c;
	kfrag_c_zero(c);
	kfrag_load_a(a, reinterpret_cast<const __nv_bfloat16 *>(s), 8);
	kfrag_load_b_nk(fb, reinterpret_cast<const __nv_bfloat16 *>(s), 8);
	kmma_bf16(c, a, fb, c);
	kfrag_load_a_trans(a, reinterpret_cast<const __nv_bfloat16 *>(s), 8);
	__syncthreads();
	kcp_async_16(s, f, true), kcp_async_4(s + 4, f, false);
	kcp_async_commit();
	kcp_async_wait<0>();
	katomic_add_f32_unordered(f + 2, 1.0f);
	f[1] = __bfloat162float(b) + c.x[0];' || fail=1
compile float_atomic fail 'deleted' 'atomicAdd(f, 1.0f);' || fail=1
compile extern_shared fail 'extern' 'extern __shared__ float dyn[]; f[0] = dyn[0];' || fail=1
compile threadfence fail 'not declared' '__threadfence(); f[0] = 1;' || fail=1
compile atomic_cas fail 'not declared' 'atomicCAS(i, 0, 1);' || fail=1
compile inline_ptx fail 'membar' 'asm volatile("membar.gl;"); f[0] = 1;' -c || fail=1
exit $fail
