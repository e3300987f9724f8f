// The ring protocol: producers claim and publish positions, consumers acquire and release them.
//
// Design note (what is guaranteed, and why):
// - Every slot has one 64-bit state word (position, owner, state). A position moves
//   EMPTY(g) -> WRITING(g, producer) -> READY(g) -> READING(g, rank) -> EMPTY(g+S), each step a
//   CAS, so exactly one process owns a slot at any time and each position is claimed once.
// - Producers claim the lowest unclaimed position: claim_hint says every position below it is
//   claimed; a producer walks up from it, skipping positions whose slot already shows them (or
//   a later one) as taken, and claims by CAS on EMPTY(g). Claims are therefore contiguous: no
//   position is skipped, whatever producers die at whatever moment.
// - Payload writes happen-before the READY CAS (release); the consumer's CAS to READING
//   acquires, so a consumer always sees the whole payload.
// - A slot only waits for the position S behind it, which its own rank consumes in order:
//   no deadlock as long as each consumer holds fewer than S/N slots (checked: -EDEADLK).
// - A producer that dies between claim and publish leaves WRITING(g, dead). Liveness comes
//   from the process table (pid + start time), never from a heartbeat, so a slow but live
//   producer is never robbed: a dead one's slot is adopted by a live producer (ring_reap.c)
//   within adopt_timeout_ms, and g is produced again from scratch.
// - Waiting spins briefly, then sleeps on a futex on the low half of the state word, which
//   changes at every transition; wakers only make the syscall when a waiter is registered.
// Not guaranteed: progress when no producer is alive (a restarted one adopts), or fairness.
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proc_ident.h" // defines: proc_start_time, proc_is_dead (common/)
#include "proc_time.h"  // defines: time_mono_ns, time_real_ns (common/)
#include "ring_layout.h"

struct RingProducer {
	Ring *ring;
	uint32_t index;
	RingProcEntry *entry;
	int claimed; // positions claimed and not yet published
};

struct RingConsumer {
	Ring *ring;
	uint32_t rank;
	RingProcEntry *entry;
	uint64_t next; // next position to acquire
	int held;      // positions acquired and not yet released
};

// single-writer counters: a plain load and store, no locked instruction on the hot path
static inline void counter_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v, memory_order_relaxed);
}

// accounts a finished wait: total, longest, and no wait in progress any more
static void wait_end(RingProcEntry *e, uint64_t wait_start, uint64_t now)
{
	uint64_t waited = now - wait_start;
	counter_add(&e->wait_ns, waited);
	atomic_store_explicit(&e->waiting_since_ns, 0, memory_order_relaxed);
	if (waited > atomic_load_explicit(&e->max_wait_ns, memory_order_relaxed))
		atomic_store_explicit(&e->max_wait_ns, waited, memory_order_relaxed);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

void ring_slot_wake(RingSlotHeader *h)
{
	if (atomic_load(&h->waiters) > 0)
		syscall(SYS_futex, (uint32_t *)&h->state, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

// Waits until h->state differs from `seen`, the deadline passes (-ETIMEDOUT) or, at the
// latest, one reap period passes (returns 0 so the caller can look for dead peers).
int ring_slot_wait(Ring *r, RingSlotHeader *h, uint64_t seen, uint64_t deadline_ns)
{
	for (int i = 0; i < 256; i++) {
		if (atomic_load_explicit(&h->state, memory_order_acquire) != seen)
			return 0;
		cpu_relax();
	}
	for (int i = 0; i < 4; i++) {
		sched_yield();
		if (atomic_load_explicit(&h->state, memory_order_acquire) != seen)
			return 0;
	}
	uint64_t now = time_mono_ns();
	if (now >= deadline_ns)
		return -ETIMEDOUT;
	uint64_t period = (uint64_t)r->adopt_timeout_ms * 1000000ull / 2 + 1000000ull;
	uint64_t wait = deadline_ns - now < period ? deadline_ns - now : period;
	struct timespec ts = {.tv_sec = (time_t)(wait / 1000000000ull), .tv_nsec = (long)(wait % 1000000000ull)};
	atomic_fetch_add(&h->waiters, 1);
	if (atomic_load(&h->state) == seen && !atomic_load(&r->ctl->closed))
		syscall(SYS_futex, (uint32_t *)&h->state, FUTEX_WAIT, (uint32_t)seen, &ts, NULL, 0);
	atomic_fetch_sub(&h->waiters, 1);
	return 0;
}

static uint64_t deadline_after(int timeout_ms)
{
	return timeout_ms < 0 ? UINT64_MAX : time_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
}

int ring_position_sane(const Ring *r, uint64_t pos)
{
	// every claimed position is below claim_hint + (claims whose hint update is in flight, at
	// most one per producer), and a slot moves S past a position only once it was consumed
	uint64_t hint = atomic_load_explicit(&r->ctl->claim_hint, memory_order_acquire);
	return pos > hint + r->n_slots + RING_MAX_PRODUCERS ? -EPROTO : 0;
}

// A walk over positions already taken: bounded by the ring's invariants and by the deadline,
// so neither a damaged slot word nor a long walk can outlast the caller's timeout.
static int skip_check(const Ring *r, uint64_t pos, uint64_t deadline_ns)
{
	if (ring_position_sane(r, pos) != 0)
		return -EPROTO;
	if (deadline_ns != UINT64_MAX && time_mono_ns() >= deadline_ns)
		return -ETIMEDOUT;
	return 0;
}

static int entry_claim(RingProcEntry *e, uint32_t from)
{
	uint32_t expect = from;
	return atomic_compare_exchange_strong(&e->state, &expect, PROC_CLAIMING_BY(getpid()));
}

static void entry_fill(RingProcEntry *e, int numa_node)
{
	e->pid = (int32_t)getpid();
	e->start_time = proc_start_time(e->pid);
	e->numa_node = numa_node;
	e->generation++;
	e->attach_unix_ns = time_real_ns();
	e->base_items = atomic_load(&e->items);
	e->base_errors = atomic_load(&e->errors);
	e->base_adopted = atomic_load(&e->adopted);
	e->base_wait_ns = atomic_load(&e->wait_ns);
	atomic_store(&e->max_wait_ns, 0);
	atomic_store(&e->waiting_since_ns, 0);
	atomic_store(&e->heartbeat_ns, time_mono_ns());
}

// --- producers -------------------------------------------------------------------------------

int ring_producer_attach(Ring *r, int numa_node, RingProducer **out)
{
	*out = NULL;
	if (r->read_only)
		return -EROFS;
	for (int pass = 0; pass < 2; pass++) {
		if (atomic_load(&r->ctl->closed))
			return -ESHUTDOWN;
		for (uint32_t i = 0; i < RING_MAX_PRODUCERS; i++) {
			RingProcEntry *e = &r->producers[i];
			if (atomic_load(&e->state) != PROC_FREE || !entry_claim(e, PROC_FREE))
				continue;
			RingProducer *p = calloc(1, sizeof *p);
			if (!p) {
				atomic_store(&e->state, PROC_FREE);
				return -ENOMEM;
			}
			entry_fill(e, numa_node);
			atomic_store_explicit(&e->state, PROC_ALIVE, memory_order_release);
			*p = (RingProducer){.ring = r, .index = i, .entry = e};
			*out = p;
			return 0;
		}
		// table full: free the entries of dead producers whose slots were all adopted
		ring_reap(r);
		uint32_t spare;
		ring_reap_internal(r, -1, &spare);
	}
	return -EUSERS;
}

void ring_producer_heartbeat(RingProducer *p)
{
	atomic_store_explicit(&p->entry->heartbeat_ns, time_mono_ns(), memory_order_relaxed);
}

static void slot_fill(Ring *r, RingSlot *s, uint32_t index, uint64_t pos)
{
	RingSlotHeader *h = &r->slots[index];
	s->position = pos;
	s->slot = index;
	s->flags = h->flags;
	s->error = h->error;
	s->sample_id = h->sample_id;
	memcpy(s->crop, h->crop, sizeof s->crop);
	memcpy(s->labels, h->labels, sizeof s->labels);
	s->payload = r->payloads + (uint64_t)index * r->slot_stride;
	s->text = (int32_t *)(s->payload + r->text_offset);
}

// a claimed position carries no labels until its producer sets them (never the last position's)
static void slot_clear_labels(RingSlot *s)
{
	for (int k = 0; k < RING_LABELS; k++)
		s->labels[k] = RING_NO_LABEL;
}

// One reap per adopt period over all producers: marks dead processes. Returns 1 and fills
// *slot when a dead producer's slot was adopted by p.
static int producer_maybe_adopt(RingProducer *p, RingSlot *slot)
{
	Ring *r = p->ring;
	RingControl *c = r->ctl;
	uint64_t now = time_mono_ns(), last = atomic_load_explicit(&c->last_reap_ns, memory_order_relaxed);
	if (now - last > (uint64_t)r->adopt_timeout_ms * 1000000ull &&
	    atomic_compare_exchange_strong(&c->last_reap_ns, &last, now))
		ring_reap(r);
	if (atomic_load_explicit(&c->dead_producers, memory_order_relaxed) == 0)
		return 0;
	uint32_t index;
	if (ring_reap_internal(r, (int)p->index, &index) != 1 || index >= r->n_slots)
		return 0;
	uint64_t w = atomic_load(&r->slots[index].state);
	slot_fill(r, slot, index, word_pos(w));
	slot->flags = RING_SLOT_ADOPTED;
	slot->error = 0;
	slot_clear_labels(slot);
	p->claimed++;
	return 1;
}

int ring_producer_claim(RingProducer *p, RingSlot *slot, int timeout_ms)
{
	Ring *r = p->ring;
	RingControl *c = r->ctl;
	const uint32_t S = r->n_slots;
	uint64_t deadline = deadline_after(timeout_ms), wait_start = 0;
	int err = 0;
	uint64_t g = atomic_load_explicit(&c->claim_hint, memory_order_acquire);
	for (;;) {
		if (atomic_load_explicit(&c->closed, memory_order_relaxed)) {
			err = -ESHUTDOWN;
			break;
		}
		if (producer_maybe_adopt(p, slot))
			break;
		RingSlotHeader *h = &r->slots[g % S];
		uint64_t w = atomic_load_explicit(&h->state, memory_order_acquire);
		uint64_t pos = word_pos(w);
		if (pos > g || (pos == g && word_state(w) != SLOT_EMPTY)) { // taken by someone
			if ((err = skip_check(r, pos, deadline)) != 0)
				break;
			g++;
			continue;
		}
		if (pos == g) {
			if (!atomic_compare_exchange_strong(&h->state, &w, slot_word(g, p->index, SLOT_WRITING)))
				continue;
			uint64_t hint = atomic_load_explicit(&c->claim_hint, memory_order_relaxed);
			while (hint < g + 1 && !atomic_compare_exchange_weak(&c->claim_hint, &hint, g + 1)) {
			}
			slot_fill(r, slot, (uint32_t)(g % S), g);
			slot->flags = 0;
			slot->error = 0;
			slot_clear_labels(slot);
			p->claimed++;
			break;
		}
		// the slot still holds position g - S (it never lags more in a sound ring): the ring is full here
		if (g - pos > S) {
			err = -EPROTO;
			break;
		}
		if (!wait_start)
			atomic_store_explicit(&p->entry->waiting_since_ns, wait_start = time_mono_ns(),
					      memory_order_relaxed);
		if ((err = ring_slot_wait(r, h, w, deadline)) != 0)
			break;
		uint64_t hint = atomic_load_explicit(&c->claim_hint, memory_order_acquire);
		if (hint > g)
			g = hint;
	}
	uint64_t now = time_mono_ns();
	if (wait_start)
		wait_end(p->entry, wait_start, now);
	atomic_store_explicit(&p->entry->heartbeat_ns, now, memory_order_relaxed);
	return err;
}

int ring_producer_publish(RingProducer *p, RingSlot *slot)
{
	Ring *r = p->ring;
	RingSlotHeader *h = &r->slots[slot->slot];
	uint64_t expect = slot_word(slot->position, p->index, SLOT_WRITING);
	if (atomic_load_explicit(&h->state, memory_order_relaxed) != expect)
		return -ESTALE;
	h->flags = slot->flags;
	h->error = slot->error;
	h->sample_id = slot->sample_id;
	memcpy(h->crop, slot->crop, sizeof h->crop);
	memcpy(h->labels, slot->labels, sizeof h->labels);
	if (!atomic_compare_exchange_strong_explicit(&h->state, &expect,
						     slot_word(slot->position, p->index, SLOT_READY),
						     memory_order_acq_rel, memory_order_relaxed))
		return -ESTALE;
	ring_slot_wake(h);
	p->claimed--;
	counter_add(&p->entry->items, 1);
	if (slot->flags & RING_SLOT_ERROR)
		counter_add(&p->entry->errors, 1);
	if (slot->flags & RING_SLOT_ADOPTED)
		counter_add(&p->entry->adopted, 1);
	return 0;
}

int ring_producer_publish_error(RingProducer *p, RingSlot *slot, int32_t code)
{
	slot->flags |= RING_SLOT_ERROR;
	slot->error = code;
	return ring_producer_publish(p, slot);
}

void ring_producer_detach(RingProducer *p)
{
	if (!p)
		return;
	RingControl *c = p->ring->ctl;
	if (p->claimed > 0) { // leave the unpublished positions to live producers
		atomic_fetch_add(&c->dead_producers, 1);
		atomic_store(&p->entry->state, PROC_DEAD);
	} else {
		atomic_store(&p->entry->state, PROC_FREE);
	}
	free(p);
}

// --- consumers -------------------------------------------------------------------------------

int ring_consumer_attach(Ring *r, uint32_t rank, RingConsumer **out)
{
	*out = NULL;
	if (r->read_only)
		return -EROFS;
	if (rank >= r->n_ranks)
		return -EINVAL;
	if (atomic_load(&r->ctl->closed))
		return -ESHUTDOWN;
	RingProcEntry *e = &r->consumers[rank];
	uint32_t st = atomic_load(&e->state);
	if (proc_is_claiming(st) && !proc_is_dead((int)(st >> 2), 0))
		return -EBUSY;
	if (st == PROC_ALIVE && !ring_proc_is_dead(e))
		return -EBUSY;
	if (!entry_claim(e, st))
		return -EBUSY;
	RingConsumer *cons = calloc(1, sizeof *cons);
	if (!cons) {
		atomic_store(&e->state, st);
		return -ENOMEM;
	}
	entry_fill(e, -1);
	// hand back what a dead predecessor had acquired but not released: delivered again
	uint64_t next = atomic_load(&e->cursor);
	if (next % r->n_ranks != rank ||
	    ring_position_sane(r, next) != 0) { // a damaged table: never start reading there
		atomic_store(&e->state, st);
		free(cons);
		return -EPROTO;
	}
	for (uint32_t s = 0; s < r->n_slots; s++) {
		RingSlotHeader *h = &r->slots[s];
		uint64_t w = atomic_load(&h->state);
		if (word_state(w) != SLOT_READING || word_owner(w) != rank)
			continue;
		if (atomic_compare_exchange_strong(&h->state, &w, slot_word(word_pos(w), 0, SLOT_READY))) {
			counter_add(&e->adopted, 1);
			if (word_pos(w) < next)
				next = word_pos(w);
		}
	}
	atomic_store(&e->cursor, next);
	atomic_store_explicit(&e->state, PROC_ALIVE, memory_order_release);
	*cons = (RingConsumer){.ring = r, .rank = rank, .entry = e, .next = next};
	*out = cons;
	return 0;
}

int ring_consumer_acquire(RingConsumer *cons, RingSlot *slot, int timeout_ms)
{
	Ring *r = cons->ring;
	RingControl *c = r->ctl;
	const uint32_t S = r->n_slots, N = r->n_ranks;
	uint64_t deadline = deadline_after(timeout_ms), wait_start = 0;
	uint64_t g = cons->next;
	int err = 0;
	for (;;) {
		RingSlotHeader *h = &r->slots[g % S];
		uint64_t w = atomic_load_explicit(&h->state, memory_order_acquire);
		uint64_t pos = word_pos(w);
		uint32_t st = word_state(w);
		if (pos > g || (pos == g && st == SLOT_READING)) { // released before a crash: already consumed
			if ((err = skip_check(r, pos, deadline)) != 0)
				break;
			g += N;
			continue;
		}
		if (pos == g && st == SLOT_READY) {
			if (!atomic_compare_exchange_strong_explicit(&h->state, &w,
								     slot_word(g, cons->rank, SLOT_READING),
								     memory_order_acq_rel, memory_order_acquire))
				continue;
			slot_fill(r, slot, (uint32_t)(g % S), g);
			cons->next = g + N;
			cons->held++;
			atomic_store_explicit(&cons->entry->cursor, cons->next, memory_order_relaxed);
			break;
		}
		if (pos < g && st == SLOT_READING && word_owner(w) == cons->rank) {
			err = -EDEADLK; // we hold position pos, which must be released before g can be produced
			break;
		}
		if (g - pos > (uint64_t)S + N) { // position g - N was claimed, so the slot cannot lag this far
			err = -EPROTO;
			break;
		}
		if (atomic_load_explicit(&c->closed, memory_order_relaxed)) {
			err = -ESHUTDOWN;
			break;
		}
		if (!wait_start)
			atomic_store_explicit(&cons->entry->waiting_since_ns, wait_start = time_mono_ns(),
					      memory_order_relaxed);
		if ((err = ring_slot_wait(r, h, w, deadline)) != 0)
			break;
	}
	uint64_t now = wait_start ? time_mono_ns() : 0;
	if (wait_start)
		wait_end(cons->entry, wait_start, now);
	// the heartbeat is cheap enough per wait, and every 64 positions on the fast path
	if (wait_start || (g / N) % 64 == 0)
		atomic_store_explicit(&cons->entry->heartbeat_ns, now ? now : time_mono_ns(), memory_order_relaxed);
	return err;
}

int ring_consumer_release(RingConsumer *cons, RingSlot *slot)
{
	Ring *r = cons->ring;
	RingSlotHeader *h = &r->slots[slot->slot];
	uint64_t expect = slot_word(slot->position, cons->rank, SLOT_READING);
	uint64_t next = slot_word(slot->position + r->n_slots, 0, SLOT_EMPTY);
	if (!atomic_compare_exchange_strong_explicit(&h->state, &expect, next, memory_order_acq_rel,
						     memory_order_relaxed))
		return -ESTALE;
	ring_slot_wake(h);
	cons->held--;
	counter_add(&cons->entry->items, 1);
	if (slot->flags & RING_SLOT_ERROR)
		counter_add(&cons->entry->errors, 1);
	return 0;
}

uint64_t ring_consumer_position(const RingConsumer *cons)
{
	return cons->next;
}

void ring_consumer_detach(RingConsumer *cons)
{
	if (!cons)
		return;
	Ring *r = cons->ring;
	// positions acquired and not released go back to READY: the next consumer of this rank gets them
	uint64_t next = cons->next;
	for (uint32_t s = 0; s < r->n_slots && cons->held > 0; s++) {
		RingSlotHeader *h = &r->slots[s];
		uint64_t w = atomic_load(&h->state);
		if (word_state(w) != SLOT_READING || word_owner(w) != cons->rank)
			continue;
		if (atomic_compare_exchange_strong(&h->state, &w, slot_word(word_pos(w), 0, SLOT_READY))) {
			cons->held--;
			counter_add(&cons->entry->adopted, 1);
			if (word_pos(w) < next)
				next = word_pos(w);
			ring_slot_wake(h);
		}
	}
	atomic_store(&cons->entry->cursor, next);
	atomic_store(&cons->entry->state, PROC_FREE);
	free(cons);
}
