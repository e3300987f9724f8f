// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) and a
// small stream wrapper over it; bit-exact across machines (integer arithmetic only).
#include "stream.h" // defines: rng_philox4x32, rng_stream_init, rng_next_*

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void rng_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
	uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
	uint32_t k0 = key[0], k1 = key[1];
	for (int r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
		uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
		uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
		uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
		c0 = hi1 ^ c1 ^ k0;
		c1 = lo1;
		c2 = hi0 ^ c3 ^ k1;
		c3 = lo0;
		k0 += PHILOX_W0;
		k1 += PHILOX_W1;
	}
	out[0] = c0;
	out[1] = c1;
	out[2] = c2;
	out[3] = c3;
}

void rng_stream_init(RngStream *s, uint64_t seed, uint64_t g, uint32_t stream)
{
	s->key[0] = (uint32_t)seed;
	s->key[1] = (uint32_t)(seed >> 32);
	s->ctr[0] = (uint32_t)g;
	s->ctr[1] = (uint32_t)(g >> 32);
	s->ctr[2] = stream;
	s->ctr[3] = 0;
	s->used = 4;
}

uint32_t rng_next_u32(RngStream *s)
{
	if (s->used == 4) {
		rng_philox4x32(s->ctr, s->key, s->buf);
		s->ctr[3]++;
		s->used = 0;
	}
	return s->buf[s->used++];
}

float rng_next_float(RngStream *s)
{
	return (float)(rng_next_u32(s) >> 8) * (1.0f / 16777216.0f);
}

uint32_t rng_next_below(RngStream *s, uint32_t n)
{
	// Lemire's multiply-shift with rejection of the biased low range
	uint64_t m = (uint64_t)rng_next_u32(s) * n;
	uint32_t lo = (uint32_t)m;
	if (lo < n) {
		uint32_t t = (uint32_t)(-n) % n;
		while (lo < t) {
			m = (uint64_t)rng_next_u32(s) * n;
			lo = (uint32_t)m;
		}
	}
	return (uint32_t)(m >> 32);
}

uint64_t rng_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
