// A process killed in the middle of attaching (its table entry left CLAIMING) does not block
// its rank or leak a producer entry: the entry records the attaching pid and is recovered.
#include <errno.h>
#include <sys/wait.h>

#include "ring_layout.h"
#include "ring_testutil.h"

int main(void)
{
	Ring *r = test_ring_create(test_ring_name("attk"), 4, 2);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0); // pid is now a process that no longer exists
	struct Ring *raw = (struct Ring *)r;
	atomic_store(&raw->consumers[1].state, PROC_CLAIMING_BY(pid));
	atomic_store(&raw->producers[0].state, PROC_CLAIMING_BY(pid));
	atomic_store(&raw->consumers[0].state, PROC_CLAIMING_BY(getpid())); // a live attach in progress

	RingConsumer *c;
	CHECK_EQ_INT(ring_consumer_attach(r, 0, &c), -EBUSY);
	CHECK_OK(ring_consumer_attach(r, 1, &c));
	ring_consumer_detach(c);

	RingStats st;
	ring_stats(r, &st, NULL, 0, NULL);
	CHECK_EQ_INT(st.dead_producers, 1);
	CHECK_EQ_INT(ring_reap(r), 1); // producer entry 0 -> DEAD
	CHECK_EQ_INT(atomic_load(&raw->producers[0].state), PROC_DEAD);
	RingProducer *p;
	RingSlot s;
	CHECK_OK(ring_producer_attach(r, 0, &p));
	CHECK_OK(ring_producer_claim(p, &s, 0)); // the claim sees it owns no slot and frees it
	CHECK_OK(ring_producer_publish(p, &s));
	CHECK_EQ_INT(atomic_load(&raw->producers[0].state), PROC_FREE);
	ring_stats(r, &st, NULL, 0, NULL);
	CHECK_EQ_INT(st.dead_producers, 0);
	CHECK_EQ_INT(st.live_producers, 1);
	ring_producer_detach(p);
	atomic_store(&raw->consumers[0].state, PROC_FREE);
	ring_close(r);
	return 0;
}
