// Ring protocol, one process: many laps around a small ring keep positions in order per rank,
// for S a multiple of N and not, and every payload arrives intact.
#include <errno.h>

#include "ring_testutil.h"

static void run(uint32_t S, uint32_t N, uint64_t total)
{
	Ring *r = test_ring_create(test_ring_name("wrap"), S, N);
	RingInfo info;
	ring_info(r, &info);
	RingProducer *p;
	CHECK_OK(ring_producer_attach(r, -1, &p));
	RingConsumer *c[8];
	for (uint32_t k = 0; k < N; k++)
		CHECK_OK(ring_consumer_attach(r, k, &c[k]));
	uint64_t produced = 0, next[8];
	for (uint32_t k = 0; k < N; k++)
		next[k] = k;
	while (produced < total) {
		// fill every free slot, then drain every rank
		RingSlot ws;
		while (ring_producer_claim(p, &ws, 0) == 0) {
			CHECK_EQ_INT(ws.position, produced);
			CHECK_EQ_INT(ws.slot, produced % S);
			test_fill_payload(ws.payload, info.payload_bytes, ws.text, 4, info.seed, ws.position);
			CHECK_OK(ring_producer_publish(p, &ws));
			produced++;
		}
		for (uint32_t k = 0; k < N; k++) {
			RingSlot rs;
			while (ring_consumer_acquire(c[k], &rs, 0) == 0) {
				CHECK_EQ_INT(rs.position, next[k]);
				CHECK(test_check_payload(rs.payload, info.payload_bytes, rs.text, 4, info.seed,
							 rs.position));
				CHECK_OK(ring_consumer_release(c[k], &rs));
				next[k] += N;
			}
		}
	}
	for (uint32_t k = 0; k < N; k++)
		ring_consumer_detach(c[k]);
	ring_producer_detach(p);
	ring_close(r);
	ring_destroy(test_ring_name("wrap"));
}

int main(void)
{
	run(4, 1, 1000);
	run(6, 3, 3000);
	run(5, 3, 3000); // S not a multiple of N: a rank's positions move between slots
	run(2, 4, 1000); // fewer slots than ranks
	return 0;
}
