// A ring segment with garbage in any field that places memory is refused at open with a line
// saying it is damaged, and damaged slot words or cursors end every wait by its deadline
// (-EPROTO, or -ETIMEDOUT) instead of spinning or writing outside the slots.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <time.h>

#include "ring_layout.h"
#include "proc_time.h" // defines: time_mono_s
#include "ring_testutil.h"

static char path[192];

static void poke(size_t off, const void *v, size_t n)
{
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, v, n, (off_t)off) == (ssize_t)n);
	close(fd);
}
static void poke_u32(size_t off, uint32_t v)
{
	poke(off, &v, sizeof v);
}
static void poke_u64(size_t off, uint64_t v)
{
	poke(off, &v, sizeof v);
}
static uint64_t peek_u64(size_t off)
{
	uint64_t v = 0;
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, &v, sizeof v, (off_t)off) == (ssize_t)sizeof v);
	close(fd);
	return v;
}

// one field set to a damaged value must be refused by a writable and a read-only open alike
static void refused(const char *name, const char *what, size_t off, uint64_t bad, int width)
{
	uint64_t good = peek_u64(off);
	if (width == 4)
		poke_u32(off, (uint32_t)bad);
	else
		poke_u64(off, bad);
	char err[512] = "";
	Ring *o = NULL;
	RingOpenOptions ro = {.read_only = 1};
	CHECK_EQ_INT(ring_open(&o, name, NULL, err, sizeof err), -EPROTO);
	printf("%-16s %s\n", what, err);
	CHECK(strstr(err, "damaged") && !strchr(err, '\n'));
	CHECK_EQ_INT(ring_open(&o, name, &ro, err, sizeof err), -EPROTO);
	if (width == 4)
		poke_u32(off, (uint32_t)good);
	else
		poke_u64(off, good);
	CHECK_OK(ring_open(&o, name, NULL, err, sizeof err));
	ring_close(o);
}

int main(void)
{
	alarm(60); // a wait that ignores its deadline fails the test instead of hanging it
	const char *name = test_ring_name("damaged");
	Ring *r = test_ring_create(name, 8, 2);
	RingInfo info;
	ring_info(r, &info);
	snprintf(path, sizeof path, "%s", info.path);

	refused(name, "text_offset", offsetof(RingControl, text_offset), 1ull << 40, 8);
	refused(name, "text_offset+1", offsetof(RingControl, text_offset), info.payload_bytes + 1, 8);
	refused(name, "payload_offset", offsetof(RingControl, payload_offset), 0, 8);
	refused(name, "slot_stride", offsetof(RingControl, slot_stride), 1ull << 62, 8);
	refused(name, "slots_offset", offsetof(RingControl, slots_offset), 64, 8);
	refused(name, "payload_bytes", offsetof(RingControl, payload_bytes), 7, 8);
	refused(name, "segment_bytes", offsetof(RingControl, segment_bytes), UINT64_MAX, 8);
	refused(name, "slots", offsetof(RingControl, slots), 1u << 30, 4);
	refused(name, "slots=0", offsetof(RingControl, slots), 0, 4);
	refused(name, "ranks", offsetof(RingControl, ranks), 1000, 4);
	refused(name, "ranks=0", offsetof(RingControl, ranks), 0, 4);
	refused(name, "frames", offsetof(RingControl, geometry.frames), 0xffffffffu, 4);
	refused(name, "width", offsetof(RingControl, geometry.width), 1u << 31, 4);
	refused(name, "text_len", offsetof(RingControl, geometry.text_len), 1u << 30, 4);
	refused(name, "adopt_timeout", offsetof(RingControl, adopt_timeout_ms), 0, 4);

	// slot words far ahead of every position in flight: the consumer's skip walk would take
	// 2^40 / N steps, the producer's 2^40; both stop at once with -EPROTO
	RingConsumer *c;
	RingProducer *p;
	CHECK_OK(ring_consumer_attach(r, 0, &c));
	CHECK_OK(ring_producer_attach(r, 0, &p));
	uint64_t saved[8];
	for (uint32_t s = 0; s < 8; s++)
		saved[s] = atomic_load(&r->slots[s].state);
	for (uint32_t s = 0; s < 8; s++)
		atomic_store(&r->slots[s].state, slot_word((1ull << 40) + s, 0, SLOT_EMPTY));
	RingSlot slot;
	double t0 = time_mono_s();
	CHECK_EQ_INT(ring_consumer_acquire(c, &slot, 200), -EPROTO);
	CHECK_EQ_INT(ring_consumer_acquire(c, &slot, -1), -EPROTO);
	CHECK_EQ_INT(ring_producer_claim(p, &slot, 200), -EPROTO);
	CHECK(time_mono_s() - t0 < 5);
	// slot words far behind the consumer's cursor and the claim hint
	atomic_store(&r->ctl->claim_hint, 1000);
	for (uint32_t s = 0; s < 8; s++)
		atomic_store(&r->slots[s].state, slot_word(s, 0, SLOT_EMPTY));
	CHECK_EQ_INT(ring_producer_claim(p, &slot, 200), -EPROTO);
	ring_consumer_detach(c);
	atomic_store(&r->consumers[0].cursor, 1000);
	CHECK_OK(ring_consumer_attach(r, 0, &c));
	CHECK_EQ_INT(ring_consumer_acquire(c, &slot, 200), -EPROTO);
	ring_consumer_detach(c);
	// a cursor no position of its rank can have, or far past every claim: refused at attach
	atomic_store(&r->ctl->claim_hint, 0);
	atomic_store(&r->consumers[0].cursor, 3);
	CHECK_EQ_INT(ring_consumer_attach(r, 0, &c), -EPROTO);
	atomic_store(&r->consumers[0].cursor, 1ull << 40);
	CHECK_EQ_INT(ring_consumer_attach(r, 0, &c), -EPROTO);
	// restored, the ring works again, and a plain empty ring times out by its deadline
	atomic_store(&r->consumers[0].cursor, 0);
	for (uint32_t s = 0; s < 8; s++)
		atomic_store(&r->slots[s].state, saved[s]);
	CHECK_OK(ring_consumer_attach(r, 0, &c));
	t0 = time_mono_s();
	CHECK_EQ_INT(ring_consumer_acquire(c, &slot, 100), -ETIMEDOUT);
	CHECK(time_mono_s() - t0 < 2);
	CHECK_OK(ring_producer_claim(p, &slot, 100));
	CHECK_EQ_INT(slot.position, 0);
	CHECK((uint8_t *)slot.text - slot.payload == (ptrdiff_t)((info.payload_bytes + 63) / 64 * 64));
	CHECK_OK(ring_producer_publish(p, &slot));
	CHECK_OK(ring_consumer_acquire(c, &slot, 100));
	CHECK_OK(ring_consumer_release(c, &slot));
	ring_consumer_detach(c);
	ring_producer_detach(p);

	// the control block changed after open cannot move a slot: views use the validated copies
	atomic_store(&r->ctl->claim_hint, 1);
	r->ctl->text_offset = 1ull << 40;
	r->ctl->slot_stride = 1ull << 40;
	CHECK_OK(ring_producer_attach(r, 0, &p));
	CHECK_OK(ring_producer_claim(p, &slot, 100));
	CHECK(slot.payload < r->base + r->bytes &&
	      (uint8_t *)(slot.text + info.geometry.text_len) <= r->base + r->bytes);
	ring_producer_detach(p);
	ring_close(r);
	printf("damaged segments refused, damaged slot words end their waits\n");
	return 0;
}
