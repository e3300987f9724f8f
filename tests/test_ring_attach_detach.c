// Attach and detach: producer table entries are reused far beyond the table size, one
// consumer per rank (-EBUSY for a second, -EINVAL past N), a consumer that detaches holding
// slots hands them to the next consumer of its rank, and a producer that detaches holding a
// claim leaves it to be adopted and produced by another.
#include <errno.h>

#include "ring_testutil.h"

int main(void)
{
	Ring *r = test_ring_create(test_ring_name("attach"), 8, 2);
	RingInfo info;
	ring_info(r, &info);
	for (int i = 0; i < 3 * RING_MAX_PRODUCERS; i++) {
		RingProducer *p;
		CHECK_OK(ring_producer_attach(r, i % 2, &p));
		ring_producer_detach(p);
	}
	RingProducer *all[RING_MAX_PRODUCERS + 1];
	for (int i = 0; i < RING_MAX_PRODUCERS; i++)
		CHECK_OK(ring_producer_attach(r, 0, &all[i]));
	CHECK_EQ_INT(ring_producer_attach(r, 0, &all[RING_MAX_PRODUCERS]), -EUSERS);
	for (int i = 1; i < RING_MAX_PRODUCERS; i++)
		ring_producer_detach(all[i]);
	RingProducer *p = all[0];

	RingConsumer *c0, *c1, *dup;
	CHECK_OK(ring_consumer_attach(r, 0, &c0));
	CHECK_EQ_INT(ring_consumer_attach(r, 0, &dup), -EBUSY);
	CHECK_EQ_INT(ring_consumer_attach(r, 2, &dup), -EINVAL);
	CHECK_OK(ring_consumer_attach(r, 1, &c1));

	RingSlot s;
	for (int i = 0; i < 8; i++) {
		CHECK_OK(ring_producer_claim(p, &s, 0));
		test_fill_payload(s.payload, info.payload_bytes, s.text, 4, info.seed, s.position);
		CHECK_OK(ring_producer_publish(p, &s));
	}
	// rank 0 takes positions 0 and 2, releases 0, detaches holding 2
	RingSlot a, b;
	CHECK_OK(ring_consumer_acquire(c0, &a, 0));
	CHECK_OK(ring_consumer_acquire(c0, &b, 0));
	CHECK_EQ_INT(a.position, 0);
	CHECK_EQ_INT(b.position, 2);
	CHECK_OK(ring_consumer_release(c0, &a));
	ring_consumer_detach(c0);
	CHECK_OK(ring_consumer_attach(r, 0, &c0));
	CHECK_EQ_INT(ring_consumer_position(c0), 2);
	CHECK_OK(ring_consumer_acquire(c0, &a, 0));
	CHECK_EQ_INT(a.position, 2);
	CHECK(test_check_payload(a.payload, info.payload_bytes, a.text, 4, info.seed, 2));
	CHECK_OK(ring_consumer_release(c0, &a));
	CHECK_OK(ring_consumer_acquire(c0, &a, 0));
	CHECK_EQ_INT(a.position, 4);
	CHECK_OK(ring_consumer_release(c0, &a));

	// a producer detaching with a claim: the position is adopted, not lost
	RingProducer *q;
	CHECK_OK(ring_producer_attach(r, 1, &q));
	// free a slot: rank 1 consumes position 1 (slot 1 -> position 9)
	CHECK_OK(ring_consumer_acquire(c1, &a, 0));
	CHECK_EQ_INT(a.position, 1);
	CHECK_OK(ring_consumer_release(c1, &a));
	// slot 0 was freed by position 0 above: position 8 is the next to claim
	CHECK_OK(ring_producer_claim(q, &s, 0));
	CHECK_EQ_INT(s.position, 8);
	memset(s.payload, 0xee, info.payload_bytes / 2); // half-written, then gone
	ring_producer_detach(q);
	CHECK_OK(ring_producer_claim(p, &s, 1000));
	CHECK_EQ_INT(s.position, 8);
	CHECK(s.flags & RING_SLOT_ADOPTED);
	test_fill_payload(s.payload, info.payload_bytes, s.text, 4, info.seed, s.position);
	CHECK_OK(ring_producer_publish(p, &s));
	CHECK_OK(ring_consumer_acquire(c0, &a, 0));
	CHECK_EQ_INT(a.position, 6);
	CHECK_OK(ring_consumer_release(c0, &a));
	CHECK_OK(ring_consumer_acquire(c0, &a, 0));
	CHECK_EQ_INT(a.position, 8);
	CHECK(test_check_payload(a.payload, info.payload_bytes, a.text, 4, info.seed, 8));
	CHECK_OK(ring_consumer_release(c0, &a));
	// the next claim finds the dead entry owns nothing any more and frees it
	CHECK_OK(ring_producer_claim(p, &s, 0));
	CHECK_EQ_INT(s.position, 9);
	test_fill_payload(s.payload, info.payload_bytes, s.text, 4, info.seed, s.position);
	CHECK_OK(ring_producer_publish(p, &s));
	RingStats st;
	ring_stats(r, &st, NULL, 0, NULL);
	CHECK_EQ_INT(st.adopted, 1);
	CHECK_EQ_INT(st.redelivered, 1);
	CHECK_EQ_INT(st.dead_producers, 0); // the detached entry was freed once its slot was adopted

	// a read-only view cannot attach
	Ring *ro;
	RingOpenOptions o = {.read_only = 1};
	CHECK_OK(ring_open(&ro, test_ring_name("attach"), &o, NULL, 0));
	CHECK_EQ_INT(ring_producer_attach(ro, 0, &q), -EROFS);
	CHECK_EQ_INT(ring_consumer_attach(ro, 1, &dup), -EROFS);
	ring_close(ro);
	ring_consumer_detach(c0);
	ring_consumer_detach(c1);
	ring_producer_detach(p);
	ring_close(r);
	return 0;
}
