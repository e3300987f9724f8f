// Read-only statistics of a ring for ringstat and tests: slots by state, totals since creation
// summed over the process tables, and one row per attached process. Only loads, never stores.
#include <string.h>
#include <time.h>

#include "ring_layout.h"
#include "proc_time.h" // defines: time_mono_ns

// time waited so far, the wait in progress included
static uint64_t entry_wait_ns(const RingProcEntry *e, uint64_t now)
{
	uint64_t since = atomic_load(&e->state) == PROC_ALIVE ? atomic_load(&e->waiting_since_ns) : 0;
	return atomic_load(&e->wait_ns) + (since && now > since ? now - since : 0);
}

static void proc_row(const RingProcEntry *e, int index, uint64_t now, RingProcStats *row)
{
	memset(row, 0, sizeof *row);
	row->index = index;
	uint32_t st;
	row->state = ring_entry_owner_dead(e, &st) ? PROC_DEAD : proc_is_claiming(st) ? PROC_ALIVE : (int)st;
	row->pid = e->pid;
	row->numa_node = e->numa_node;
	row->attach_unix_ns = e->attach_unix_ns;
	uint64_t hb = atomic_load(&e->heartbeat_ns);
	row->heartbeat_age_ns = now > hb ? now - hb : 0;
	row->items = atomic_load(&e->items) - e->base_items;
	row->errors = atomic_load(&e->errors) - e->base_errors;
	row->adopted = atomic_load(&e->adopted) - e->base_adopted;
	row->wait_ns = entry_wait_ns(e, now) - e->base_wait_ns;
	row->max_wait_ns = atomic_load(&e->max_wait_ns);
	row->position = atomic_load(&e->cursor);
}

int ring_stats(const Ring *r, RingStats *s, RingProcStats *procs, int max_procs, int *n_producers)
{
	const RingControl *c = r->ctl;
	memset(s, 0, sizeof *s);
	s->now_ns = time_mono_ns();
	s->age_ns = s->now_ns - c->created_mono_ns;
	for (uint32_t i = 0; i < r->n_slots; i++) {
		switch (word_state(atomic_load(&r->slots[i].state))) {
		case SLOT_EMPTY: s->empty++; break;
		case SLOT_WRITING: s->writing++; break;
		case SLOT_READY: s->ready++; break;
		default: s->reading++; break;
		}
	}
	int n = 0, np = 0;
	for (int i = 0; i < RING_MAX_PRODUCERS; i++) {
		const RingProcEntry *e = &r->producers[i];
		s->produced += atomic_load(&e->items);
		s->errors += atomic_load(&e->errors);
		s->adopted += atomic_load(&e->adopted);
		s->producer_wait_ns += entry_wait_ns(e, s->now_ns);
		uint32_t st;
		int dead = ring_entry_owner_dead(e, &st);
		if (st == PROC_FREE)
			continue;
		if (st == PROC_DEAD || dead)
			s->dead_producers++;
		else
			s->live_producers++;
		if (procs && n < max_procs)
			proc_row(e, i, s->now_ns, &procs[n++]), np++;
	}
	for (uint32_t k = 0; k < r->n_ranks; k++) {
		const RingProcEntry *e = &r->consumers[k];
		s->consumed += atomic_load(&e->items);
		s->redelivered += atomic_load(&e->adopted);
		s->consumer_wait_ns += entry_wait_ns(e, s->now_ns);
		uint32_t st;
		int dead = ring_entry_owner_dead(e, &st);
		if (st == PROC_FREE)
			continue;
		if (st != PROC_DEAD && !dead)
			s->live_consumers++;
		if (procs && n < max_procs)
			proc_row(e, (int)k, s->now_ns, &procs[n++]);
	}
	s->claim_position = atomic_load(&c->claim_hint);
	if (n_producers)
		*n_producers = np;
	return n;
}
