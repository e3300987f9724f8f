// A kernel that must spill when ptxas gets 16 registers: tests/test_cuda_spills.sh compiles it
// that way to prove the spill check fails on a spilling kernel.
__global__ void spill_probe(float *out, const float *in)
{
	float a[48];
#pragma unroll
	for (int i = 0; i < 48; i++)
		a[i] = in[i * blockDim.x + threadIdx.x];
#pragma unroll
	for (int r = 0; r < 4; r++)
#pragma unroll
		for (int i = 0; i < 48; i++)
			a[i] = a[i] * a[(i + r + 1) % 48] + 1.0f;
	float s = 0.0f;
#pragma unroll
	for (int i = 0; i < 48; i++)
		s += a[i] * (float)(i + 1);
	out[threadIdx.x] = s;
}
