// Recreating a ring under the same name gives it a new instance id; processes attached to the
// old one learn it (ring_check_instance -> -ESTALE, waits end with -ESHUTDOWN) and re-attach; a
// replace that cannot remove what holds the name fails, naming it.
#include <errno.h>
#include <sys/stat.h>

#include "ring_testutil.h"

int main(void)
{
	const char *name = test_ring_name("inst");
	Ring *old = test_ring_create(name, 4, 1);
	RingInfo a, b;
	ring_info(old, &a);
	RingProducer *p;
	RingConsumer *c;
	CHECK_OK(ring_producer_attach(old, 0, &p));
	CHECK_OK(ring_consumer_attach(old, 0, &c));
	CHECK_OK(ring_check_instance(old));

	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = a.geometry;
	o.slots = 4;
	o.replace = 1;
	Ring *fresh;
	char err[256];
	CHECK_OK(ring_create(&fresh, name, &o, err, sizeof err));
	ring_info(fresh, &b);
	CHECK(a.instance_id != b.instance_id);
	CHECK_EQ_INT(ring_check_instance(old), -ESTALE);
	CHECK_OK(ring_check_instance(fresh));

	RingSlot s;
	CHECK_EQ_INT(ring_producer_claim(p, &s, 1000), -ESHUTDOWN);
	CHECK_EQ_INT(ring_consumer_acquire(c, &s, 1000), -ESHUTDOWN);
	ring_producer_detach(p);
	ring_consumer_detach(c);
	ring_close(old);

	// re-attach by name finds the new instance
	Ring *again;
	CHECK_OK(ring_open(&again, name, NULL, err, sizeof err));
	RingInfo c2;
	ring_info(again, &c2);
	CHECK(c2.instance_id == b.instance_id);
	CHECK_OK(ring_producer_attach(again, 0, &p));
	CHECK_OK(ring_producer_claim(p, &s, 0));
	CHECK_EQ_INT(s.position, 0);
	ring_producer_detach(p);
	ring_close(again);
	ring_close(fresh);

	CHECK_OK(ring_destroy(name));
	test_ring_created[0] = 0;

	// replacing what cannot be removed (here a folder under the ring's name) is an error naming it,
	// and nothing is published in its place
	char path[128];
	snprintf(path, sizeof path, "/dev/shm/%s", name);
	CHECK(mkdir(path, 0700) == 0);
	Ring *r = NULL; // the options above: replace = 1
	int e = ring_create(&r, name, &o, err, sizeof err);
	printf("%s\n", err);
	rmdir(path);
	CHECK(e < 0 && r == NULL);
	CHECK(strstr(err, "cannot replace ring") && strstr(err, path));
	return 0;
}
