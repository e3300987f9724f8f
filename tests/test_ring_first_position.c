// A ring can start its stream at any position (a resumed run continues where it stopped):
// every rank's first position is the first of its own at or after the start, slots included.
#include "ring_testutil.h"

int main(void)
{
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = 1, .height = 1, .width = 8, .channels = 1, .text_len = 0};
	o.slots = 5;
	o.ranks = 4;
	o.first_position = 1001;
	Ring *r;
	char err[256];
	const char *name = test_ring_name("first");
	CHECK_OK(ring_create(&r, name, &o, err, sizeof err));
	RingProducer *p;
	RingConsumer *c[4];
	CHECK_OK(ring_producer_attach(r, 0, &p));
	for (uint32_t k = 0; k < 4; k++) {
		CHECK_OK(ring_consumer_attach(r, k, &c[k]));
		uint64_t want = 1001 + (k + 4 - 1001 % 4) % 4;
		CHECK_EQ_INT(ring_consumer_position(c[k]), want);
	}
	uint64_t next = 1001;
	for (int lap = 0; lap < 50; lap++) {
		RingSlot s;
		while (ring_producer_claim(p, &s, 0) == 0) {
			CHECK_EQ_INT(s.position, next);
			CHECK_EQ_INT(s.slot, next % 5);
			s.sample_id = next;
			CHECK_OK(ring_producer_publish(p, &s));
			next++;
		}
		for (uint32_t k = 0; k < 4; k++)
			while (ring_consumer_acquire(c[k], &s, 0) == 0) {
				CHECK_EQ_INT(s.position % 4, k);
				CHECK_EQ_INT(s.sample_id, s.position);
				CHECK_OK(ring_consumer_release(c[k], &s));
			}
	}
	CHECK(next > 1200);
	for (uint32_t k = 0; k < 4; k++)
		ring_consumer_detach(c[k]);
	ring_producer_detach(p);
	ring_close(r);
	ring_destroy(name);
	return 0;
}
