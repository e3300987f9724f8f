// Ring creation options: hugepages fall back to /dev/shm with a reason when hugetlbfs has no
// pages; a NUMA node binds the segment's memory there (checked with get_mempolicy), and a node
// that does not exist is refused with a message.
#include <errno.h>
#ifdef HAVE_NUMA
#include <numa.h>
#include <numaif.h>
#endif

#include "ring_layout.h"
#include "ring_testutil.h"

int main(void)
{
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = 2, .height = 8, .width = 7, .channels = 3, .text_len = 77};
	o.slots = 3;
	o.hugepages = 1;
	char name[64], err[256] = "";
	snprintf(name, sizeof name, "%s", test_ring_name("opts"));
	Ring *r;
	// removed at exit whatever happens, like the rings test_ring_create makes
	snprintf(test_ring_created, sizeof test_ring_created, "%s", name);
	atexit(test_ring_cleanup);
	CHECK_OK(ring_create(&r, name, &o, err, sizeof err));
	RingInfo info;
	ring_info(r, &info);
	printf("hugepages=%d path=%s note='%s'\n", info.hugepages, info.path, info.hugepage_note);
	if (info.hugepages) {
		CHECK(strncmp(info.path, "/dev/shm/", 9) != 0);
		CHECK_EQ_INT(info.segment_bytes % (2u << 20), 0);
	} else {
		CHECK(strncmp(info.path, "/dev/shm/", 9) == 0);
		CHECK(info.hugepage_note[0] != 0); // the creator logs why
	}
	RingProducer *p;
	RingSlot s;
	CHECK_OK(ring_producer_attach(r, 0, &p));
	CHECK_OK(ring_producer_claim(p, &s, 0));
	CHECK(((uintptr_t)s.payload & 4095) == 0);
	CHECK((uint8_t *)s.text - s.payload == 384); // 336 clip bytes rounded up to a cache line
	ring_producer_detach(p);
	ring_close(r);
	CHECK_OK(ring_destroy(name));

	o.hugepages = 0;
	o.numa_node = 0;
#ifdef HAVE_NUMA
	if (numa_available() < 0) {
		CHECK_EQ_INT(ring_create(&r, name, &o, err, sizeof err), -ENOTSUP);
		printf("no NUMA support in this kernel: %s\n", err);
		return 0;
	}
	CHECK_OK(ring_create(&r, name, &o, err, sizeof err));
	int mode = -1;
	unsigned long mask[16] = {0};
	CHECK(get_mempolicy(&mode, mask, sizeof mask * 8, ((struct Ring *)r)->base, MPOL_F_ADDR) == 0);
	printf("mempolicy mode %d mask %#lx\n", mode, mask[0]);
	CHECK_EQ_INT(mode, MPOL_BIND);
	CHECK(mask[0] & 1);
	ring_info(r, &info);
	CHECK_EQ_INT(info.numa_node, 0);
	ring_close(r);
	CHECK_OK(ring_destroy(name));
	o.numa_node = numa_max_node() + 1;
	CHECK_EQ_INT(ring_create(&r, name, &o, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "does not exist"));
#else
	CHECK_EQ_INT(ring_create(&r, name, &o, err, sizeof err), -ENOTSUP);
	CHECK(strstr(err, "libnuma"));
#endif
	printf("%s\n", err);
	return 0;
}
