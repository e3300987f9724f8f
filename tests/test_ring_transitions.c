// Ring protocol, one process: a position goes EMPTY -> WRITING -> READY -> READING -> EMPTY(g+S),
// ringstat's slot counts follow, and a second publish or release of the same slot is refused.
#include <errno.h>

#include "ring_testutil.h"

static void expect_states(Ring *r, uint32_t empty, uint32_t writing, uint32_t ready, uint32_t reading)
{
	RingStats s;
	ring_stats(r, &s, NULL, 0, NULL);
	CHECK_EQ_INT(s.empty, empty);
	CHECK_EQ_INT(s.writing, writing);
	CHECK_EQ_INT(s.ready, ready);
	CHECK_EQ_INT(s.reading, reading);
}

int main(void)
{
	Ring *r = test_ring_create(test_ring_name("trans"), 4, 1);
	RingProducer *p;
	RingConsumer *c;
	CHECK_OK(ring_producer_attach(r, 0, &p));
	CHECK_OK(ring_consumer_attach(r, 0, &c));
	expect_states(r, 4, 0, 0, 0);

	RingSlot ws, rs;
	CHECK_OK(ring_producer_claim(p, &ws, 0));
	CHECK_EQ_INT(ws.position, 0);
	CHECK_EQ_INT(ws.slot, 0);
	CHECK(((uintptr_t)ws.payload & 4095) == 0);
	expect_states(r, 3, 1, 0, 0);
	// nothing READY yet: a consumer times out instead of seeing a half-written slot
	CHECK_EQ_INT(ring_consumer_acquire(c, &rs, 20), -ETIMEDOUT);

	RingInfo info;
	ring_info(r, &info);
	test_fill_payload(ws.payload, info.payload_bytes, ws.text, 4, info.seed, ws.position);
	ws.sample_id = 77;
	ws.crop[0] = 1, ws.crop[1] = 2, ws.crop[2] = 30, ws.crop[3] = 40;
	CHECK_OK(ring_producer_publish(p, &ws));
	expect_states(r, 3, 0, 1, 0);
	CHECK_EQ_INT(ring_producer_publish(p, &ws), -ESTALE);

	CHECK_OK(ring_consumer_acquire(c, &rs, 0));
	CHECK_EQ_INT(rs.position, 0);
	CHECK_EQ_INT(rs.sample_id, 77);
	CHECK_EQ_INT(rs.crop[2], 30);
	CHECK_EQ_INT(rs.flags, 0);
	CHECK(test_check_payload(rs.payload, info.payload_bytes, rs.text, 4, info.seed, 0));
	expect_states(r, 3, 0, 0, 1);

	CHECK_OK(ring_consumer_release(c, &rs));
	expect_states(r, 4, 0, 0, 0);
	CHECK_EQ_INT(ring_consumer_release(c, &rs), -ESTALE);
	CHECK_EQ_INT(ring_consumer_position(c), 1);

	RingStats s;
	ring_stats(r, &s, NULL, 0, NULL);
	CHECK_EQ_INT(s.produced, 1);
	CHECK_EQ_INT(s.consumed, 1);
	CHECK_EQ_INT(s.claim_position, 1);
	ring_consumer_detach(c);
	ring_producer_detach(p);
	ring_close(r);
	return 0;
}
