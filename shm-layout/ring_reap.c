// Liveness of the processes in the ring's tables and adoption of slots left by dead producers.
//
// A process is dead when its pid is gone, is a zombie, or now belongs to another process
// (the start time in /proc differs from the one recorded at attach: common/proc_ident.c). Heartbeats are shown by
// ringstat but never used to declare death: a slow producer must not lose its slot while it is
// still writing into it.
#include "proc_ident.h" // defines: proc_is_dead (common/)
#include "ring_layout.h"

int ring_proc_is_dead(const RingProcEntry *e)
{
	return proc_is_dead(e->pid, e->start_time);
}

// An entry whose owner died, attached (ALIVE) or in the middle of attaching (CLAIMING).
int ring_entry_owner_dead(const RingProcEntry *e, uint32_t *word)
{
	uint32_t w = atomic_load(&e->state);
	*word = w;
	if (w == PROC_ALIVE)
		return ring_proc_is_dead(e);
	return proc_is_claiming(w) && proc_is_dead((int)(w >> 2), 0);
}

int ring_reap(Ring *r)
{
	if (r->read_only)
		return 0;
	int found = 0;
	for (uint32_t i = 0; i < RING_MAX_PRODUCERS; i++) {
		RingProcEntry *e = &r->producers[i];
		uint32_t st;
		if (!ring_entry_owner_dead(e, &st))
			continue;
		if (atomic_compare_exchange_strong(&e->state, &st, PROC_DEAD)) {
			atomic_fetch_add(&r->ctl->dead_producers, 1);
			found++;
		}
	}
	for (uint32_t k = 0; k < r->n_ranks; k++) {
		RingProcEntry *e = &r->consumers[k];
		uint32_t st;
		// a dead consumer's slots are handed back when its rank attaches again
		if (ring_entry_owner_dead(e, &st) && atomic_compare_exchange_strong(&e->state, &st, PROC_DEAD))
			found++;
	}
	return found;
}

int ring_reap_internal(Ring *r, int adopt_for, uint32_t *slot_index)
{
	if (r->read_only || atomic_load(&r->ctl->dead_producers) == 0)
		return 0;
	uint32_t owned[RING_MAX_PRODUCERS] = {0};
	for (uint32_t s = 0; s < r->n_slots; s++) {
		RingSlotHeader *h = &r->slots[s];
		uint64_t w = atomic_load(&h->state);
		if (word_state(w) != SLOT_WRITING)
			continue;
		uint32_t owner = word_owner(w);
		if (owner >= RING_MAX_PRODUCERS || atomic_load(&r->producers[owner].state) != PROC_DEAD)
			continue;
		if (adopt_for >= 0 &&
		    atomic_compare_exchange_strong(&h->state, &w,
						   slot_word(word_pos(w), (uint32_t)adopt_for, SLOT_WRITING))) {
			*slot_index = s;
			return 1;
		}
		owned[owner]++;
	}
	// a dead producer that owns no slot any more frees its table entry
	for (uint32_t i = 0; i < RING_MAX_PRODUCERS; i++) {
		uint32_t st = PROC_DEAD;
		if (owned[i] == 0 && atomic_load(&r->producers[i].state) == PROC_DEAD &&
		    atomic_compare_exchange_strong(&r->producers[i].state, &st, PROC_FREE))
			atomic_fetch_sub(&r->ctl->dead_producers, 1);
	}
	return 0;
}
