// Waiting never hangs: an empty ring times out the consumer, a full ring times out the
// producer, a consumer that holds the slot it waits for gets -EDEADLK, and the time spent
// waiting is counted for ringstat.
#include <errno.h>

#include "ring_testutil.h"

int main(void)
{
	Ring *r = test_ring_create(test_ring_name("waits"), 2, 1);
	RingProducer *p;
	RingConsumer *c;
	CHECK_OK(ring_producer_attach(r, 0, &p));
	CHECK_OK(ring_consumer_attach(r, 0, &c));
	RingSlot s, h1, h2, h3;
	CHECK_EQ_INT(ring_consumer_acquire(c, &s, 50), -ETIMEDOUT);
	for (int i = 0; i < 2; i++) {
		CHECK_OK(ring_producer_claim(p, &s, 0));
		CHECK_OK(ring_producer_publish(p, &s));
	}
	CHECK_EQ_INT(ring_producer_claim(p, &s, 50), -ETIMEDOUT);
	CHECK_OK(ring_consumer_acquire(c, &h1, 0));
	CHECK_OK(ring_consumer_acquire(c, &h2, 0));
	// position 2 lives in slot 0, which this consumer holds with position 0
	CHECK_EQ_INT(ring_consumer_acquire(c, &h3, 1000), -EDEADLK);
	CHECK_OK(ring_consumer_release(c, &h1));
	CHECK_OK(ring_producer_claim(p, &s, 0));
	CHECK_EQ_INT(s.position, 2);
	CHECK_OK(ring_producer_publish_error(p, &s, 42));
	CHECK_OK(ring_consumer_acquire(c, &h3, 0));
	CHECK_EQ_INT(h3.position, 2);
	CHECK(h3.flags & RING_SLOT_ERROR);
	CHECK_EQ_INT(h3.error, 42);
	CHECK_OK(ring_consumer_release(c, &h3));
	CHECK_OK(ring_consumer_release(c, &h2));

	RingStats st;
	RingProcStats rows[4];
	int n = ring_stats(r, &st, rows, 4, NULL);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(st.errors, 1);
	CHECK(st.producer_wait_ns >= 40000000ull);
	CHECK(st.consumer_wait_ns >= 40000000ull);
	CHECK(rows[1].max_wait_ns >= 40000000ull);
	CHECK_EQ_INT(rows[1].errors, 1);
	ring_consumer_detach(c);
	ring_producer_detach(p);
	ring_close(r);
	return 0;
}
