// The single-machine bootstrap record in the control block: rank 0 publishes the NCCL unique id,
// the other ranks read it, and nobody ever takes one of another job, ring instance or dead rank 0.
//
// Concurrency: a seqlock. A publisher makes boot_seq odd (CAS from even), stores the fields,
// then makes it even again; a reader copies the fields between two equal, even reads of
// boot_seq. Every field is an atomic word, so there is no data race, only retries. A publisher
// killed mid-write leaves boot_seq odd: the next publisher waits 100 ms for it, then takes the
// record over (the half-written fields are overwritten before boot_seq turns even).
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc_ident.h" // defines: proc_start_time, proc_is_dead (common/)
#include "proc_time.h"  // defines: time_mono_ns
#include "ring_layout.h"

#define BOOT_WORDS (RING_BOOT_BLOB_MAX / 8)
#define BOOT_TAKEOVER_NS 100000000ull // a live writer holds the record for microseconds

// Makes boot_seq odd for this writer; returns the odd value it set.
static uint64_t boot_lock(RingControl *c)
{
	uint64_t s = atomic_load(&c->boot_seq), t0 = time_mono_ns();
	for (;;) {
		if (!(s & 1)) {
			if (atomic_compare_exchange_weak(&c->boot_seq, &s, s + 1))
				return s + 1;
			continue;
		}
		if (time_mono_ns() - t0 > BOOT_TAKEOVER_NS) { // its writer died mid-write: take over, stay odd
			if (atomic_compare_exchange_weak(&c->boot_seq, &s, s + 2))
				return s + 2;
			continue;
		}
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
		s = atomic_load(&c->boot_seq);
	}
}

static void boot_store(RingControl *c, uint64_t token, uint64_t instance, uint64_t start, int pid, size_t len,
		       uint32_t world, const void *blob)
{
	uint64_t words[BOOT_WORDS] = {0};
	if (blob)
		memcpy(words, blob, len);
	atomic_store(&c->boot_token, token);
	atomic_store(&c->boot_instance, instance);
	atomic_store(&c->boot_start, start);
	atomic_store(&c->boot_pid_len, (uint64_t)(uint32_t)pid << 32 | (uint32_t)len);
	atomic_store(&c->boot_world, world);
	for (int i = 0; i < BOOT_WORDS; i++)
		atomic_store(&c->boot_blob[i], words[i]);
}

int ring_boot_publish(Ring *r, uint64_t token, uint32_t world, const void *blob, size_t len)
{
	if (!blob || len == 0 || len > RING_BOOT_BLOB_MAX || world == 0)
		return -EINVAL;
	if (r->read_only)
		return -EROFS;
	int e = ring_check_instance(r);
	if (e)
		return e;
	int pid = (int)getpid();
	uint64_t start = proc_start_time(pid);
	uint64_t s = boot_lock(r->ctl);
	boot_store(r->ctl, token, r->instance_id, start, pid, len, world, blob);
	atomic_store(&r->ctl->boot_seq, s + 1);
	return 0;
}

int ring_boot_clear(Ring *r, uint64_t token)
{
	if (r->read_only)
		return -EROFS;
	uint64_t s = boot_lock(r->ctl);
	int pid = (int)(atomic_load(&r->ctl->boot_pid_len) >> 32);
	int mine = pid == 0 || atomic_load(&r->ctl->boot_token) == token;
	if (mine)
		boot_store(r->ctl, 0, 0, 0, 0, 0, 0, NULL);
	atomic_store(&r->ctl->boot_seq, s + 1);
	return mine ? 0 : -EPERM;
}

// The publisher has exited, or its pid now belongs to another process.
static int publisher_gone(int pid, uint64_t start)
{
	return proc_is_dead(pid, start);
}

int ring_boot_read(Ring *r, uint64_t token, uint32_t world, void *blob, size_t len, RingBootSeen *seen)
{
	RingBootSeen spare;
	if (!seen)
		seen = &spare;
	memset(seen, 0, sizeof *seen);
	if (!blob || len == 0 || len > RING_BOOT_BLOB_MAX)
		return -EINVAL;
	int e = ring_check_instance(r);
	if (e)
		return e;
	const RingControl *c = r->ctl;
	seen->state = RING_BOOT_BUSY;
	for (int attempt = 0; attempt < 1000; attempt++) {
		uint64_t s1 = atomic_load(&c->boot_seq);
		if (s1 & 1) {
			sched_yield();
			continue;
		}
		uint64_t tok = atomic_load(&c->boot_token), inst = atomic_load(&c->boot_instance);
		uint64_t start = atomic_load(&c->boot_start), pl = atomic_load(&c->boot_pid_len);
		uint64_t w = atomic_load(&c->boot_world), words[BOOT_WORDS];
		for (int i = 0; i < BOOT_WORDS; i++)
			words[i] = atomic_load(&c->boot_blob[i]);
		if (atomic_load(&c->boot_seq) != s1)
			continue;

		int pid = (int)(pl >> 32);
		size_t plen = (size_t)(uint32_t)pl;
		*seen = (RingBootSeen){.generation = s1 / 2, .token = tok, .world = (uint32_t)w, .pid = pid};
		if (pid == 0)
			seen->state = RING_BOOT_NONE;
		else if (inst != r->instance_id)
			seen->state = RING_BOOT_OTHER_INSTANCE;
		else if (tok != token)
			seen->state = RING_BOOT_OTHER_JOB;
		else if (publisher_gone(pid, start))
			seen->state = RING_BOOT_DEAD_PUBLISHER;
		else
			seen->state = RING_BOOT_READY;
		if (seen->state != RING_BOOT_READY)
			return -EAGAIN;
		if (w != world || plen != len)
			return -EPROTO;
		memcpy(blob, words, len);
		return 0;
	}
	return -EAGAIN; // a writer held it throughout: the caller polls again
}
