// A kernel whose bf16 pair store through memcpy compiles to byte stores: tests/test_cuda_sass_bytes.sh
// builds it to prove the byte-access check fails on such a kernel.
#include <cuda_bf16.h>
#include <stdint.h>
#include <string.h>

__global__ void u8_probe(__nv_bfloat16 *out, const float *in)
{
	const uint32_t v = __float_as_uint(in[threadIdx.x]);
	memcpy(out + 2 * threadIdx.x, &v, sizeof v);
}
