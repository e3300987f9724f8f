// A ring written by a binary of another ABI version, a file that is not a ring, and a damaged
// header are refused with a message that names both versions (never misread).
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>

#include "ring_layout.h"
#include "ring_testutil.h"

static void poke_u32(const char *path, size_t off, uint32_t v)
{
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, &v, sizeof v, (off_t)off) == (ssize_t)sizeof v);
	close(fd);
}

int main(void)
{
	const char *name = test_ring_name("abi");
	Ring *r = test_ring_create(name, 4, 1);
	RingInfo info;
	ring_info(r, &info);
	ring_close(r);

	char err[512] = "", want[96];
	Ring *o = NULL;
	poke_u32(info.path, offsetof(RingControl, abi_version), RING_ABI_VERSION + 7);
	CHECK_EQ_INT(ring_open(&o, name, NULL, err, sizeof err), -EPROTO);
	CHECK(o == NULL);
	printf("%s\n", err);
	snprintf(want, sizeof want, "ABI version %u", RING_ABI_VERSION + 7);
	CHECK(strstr(err, want));
	snprintf(want, sizeof want, "ABI version %u", RING_ABI_VERSION);
	CHECK(strstr(err, want));
	// ringstat opens read-only: the same refusal
	RingOpenOptions ro = {.read_only = 1};
	CHECK_EQ_INT(ring_open(&o, name, &ro, err, sizeof err), -EPROTO);

	poke_u32(info.path, offsetof(RingControl, abi_version), RING_ABI_VERSION);
	poke_u32(info.path, offsetof(RingControl, slot_header_bytes), 128);
	CHECK_EQ_INT(ring_open(&o, name, NULL, err, sizeof err), -EPROTO);
	printf("%s\n", err);
	CHECK(strstr(err, "layout differs"));

	poke_u32(info.path, offsetof(RingControl, slot_header_bytes), sizeof(RingSlotHeader));
	poke_u32(info.path, offsetof(RingControl, slots), 1u << 30); // header claims more than the file holds
	CHECK_EQ_INT(ring_open(&o, name, NULL, err, sizeof err), -EPROTO);
	printf("%s\n", err);
	CHECK(strstr(err, "damaged"));

	poke_u32(info.path, 0, 0xdeadbeef);
	CHECK_EQ_INT(ring_open(&o, name, NULL, err, sizeof err), -EPROTO);
	printf("%s\n", err);
	CHECK(strstr(err, "not an avclip ring"));

	// a tiny file under a ring's name
	char small[128];
	snprintf(small, sizeof small, "/dev/shm/%s-small", name);
	int fd = open(small, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1);
	close(fd);
	snprintf(want, sizeof want, "%s-small", name);
	CHECK_EQ_INT(ring_open(&o, want, NULL, err, sizeof err), -EPROTO);
	printf("%s\n", err);
	unlink(small);

	CHECK_EQ_INT(ring_open(&o, "t-no-such-ring", NULL, err, sizeof err), -ENOENT);
	CHECK(strstr(err, "not found"));
	// a segment that is not a valid ring is still removed by name
	CHECK_OK(ring_destroy(name));
	CHECK_EQ_INT(ring_destroy(name), -ENOENT);
	return 0;
}
