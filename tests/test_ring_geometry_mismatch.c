// Opening a ring whose clip geometry differs from the one a program needs fails with a
// message naming both geometries; the same geometry opens.
#include <errno.h>

#include "ring_testutil.h"

int main(void)
{
	char name[64];
	snprintf(name, sizeof name, "%s", test_ring_name("geom"));
	Ring *r = test_ring_create(name, 4, 2);
	RingGeometry same = {.frames = 1, .height = 4, .width = 16, .channels = 3, .text_len = 4};
	RingGeometry other = {.frames = 16, .height = 224, .width = 224, .channels = 3, .text_len = 77};
	char err[512] = "";
	Ring *o = NULL;
	RingOpenOptions opt = {.expect_geometry = &other};
	CHECK_EQ_INT(ring_open(&o, name, &opt, err, sizeof err), -EINVAL);
	printf("%s\n", err);
	CHECK(strstr(err, "T=1 H=4 W=16 C=3 text=4"));
	CHECK(strstr(err, "T=16 H=224 W=224 C=3 text=77"));
	opt.expect_geometry = &same;
	CHECK_OK(ring_open(&o, name, &opt, err, sizeof err));
	RingInfo info;
	ring_info(o, &info);
	CHECK_EQ_INT(info.ranks, 2);
	CHECK_EQ_INT(info.payload_bytes, 4 * 16 * 3);
	CHECK_EQ_INT(info.slot_stride % 4096, 0);
	ring_close(o);

	// bad geometry at creation is refused with a reason
	RingCreateOptions co;
	ring_create_options_default(&co);
	co.geometry.width = 0;
	CHECK_EQ_INT(ring_create(&o, test_ring_name("geom0"), &co, err, sizeof err), -EINVAL);
	printf("%s\n", err);
	CHECK(strstr(err, "width (W) must be 1..16384, got 0"));
	ring_create_options_default(&co);
	co.geometry.text_len = 70000;
	CHECK_EQ_INT(ring_create(&o, test_ring_name("geom0"), &co, err, sizeof err), -EINVAL);
	printf("%s\n", err);
	CHECK(strstr(err, "text length must be 0..65536, got 70000"));
	ring_create_options_default(&co);
	co.geometry.channels = 1000;
	CHECK_EQ_INT(ring_create(&o, test_ring_name("geom0"), &co, err, sizeof err), -EINVAL);
	CHECK(strstr(err, "channels (C) must be 1..16, got 1000"));
	ring_create_options_default(&co);
	co.ranks = RING_MAX_CONSUMERS + 1;
	CHECK_EQ_INT(ring_create(&o, test_ring_name("geom1"), &co, err, sizeof err), -EINVAL);
	CHECK_EQ_INT(ring_create(&o, "bad/name", &co, err, sizeof err), -EINVAL);
	// an existing name is not silently replaced
	ring_create_options_default(&co);
	co.geometry = same;
	CHECK_EQ_INT(ring_create(&o, name, &co, err, sizeof err), -EEXIST);
	CHECK(strstr(err, "already exists"));
	ring_close(r);
	return 0;
}
