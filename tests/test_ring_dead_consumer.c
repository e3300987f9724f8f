// A consumer process that dies holding acquired slots: the next process to attach its rank
// gets those positions again, in order, and nothing after them is skipped or repeated.
#include <errno.h>
#include <sys/wait.h>

#include "ring_testutil.h"

int main(void)
{
	char name[64];
	snprintf(name, sizeof name, "%s", test_ring_name("deadc"));
	Ring *r = test_ring_create(name, 8, 1);
	RingInfo info;
	ring_info(r, &info);
	RingProducer *p;
	CHECK_OK(ring_producer_attach(r, 0, &p));
	RingSlot s;
	for (int i = 0; i < 8; i++) {
		CHECK_OK(ring_producer_claim(p, &s, 0));
		test_fill_payload(s.payload, info.payload_bytes, s.text, 4, info.seed, s.position);
		CHECK_OK(ring_producer_publish(p, &s));
	}
	pid_t pid = fork();
	if (pid == 0) { // consumes 0 and 1, holds 2 and 3, dies
		Ring *cr;
		RingConsumer *c;
		if (ring_open(&cr, name, NULL, NULL, 0) || ring_consumer_attach(cr, 0, &c))
			_exit(2);
		RingSlot a;
		for (int i = 0; i < 4; i++) {
			if (ring_consumer_acquire(c, &a, 1000))
				_exit(3);
			if (i < 2 && ring_consumer_release(c, &a))
				_exit(4);
		}
		_exit(0);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	RingConsumer *c;
	CHECK_OK(ring_consumer_attach(r, 0, &c));
	CHECK_EQ_INT(ring_consumer_position(c), 2);
	for (uint64_t g = 2; g < 8; g++) {
		CHECK_OK(ring_consumer_acquire(c, &s, 0));
		CHECK_EQ_INT(s.position, g);
		CHECK(test_check_payload(s.payload, info.payload_bytes, s.text, 4, info.seed, g));
		CHECK_OK(ring_consumer_release(c, &s));
	}
	CHECK_EQ_INT(ring_consumer_acquire(c, &s, 0), -ETIMEDOUT);
	RingStats st;
	ring_stats(r, &st, NULL, 0, NULL);
	CHECK_EQ_INT(st.redelivered, 2);
	CHECK_EQ_INT(st.consumed, 8);
	ring_consumer_detach(c);
	ring_producer_detach(p);
	ring_close(r);
	return 0;
}
