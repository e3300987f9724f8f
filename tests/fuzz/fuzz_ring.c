// Fuzz harness: ring open on a mapped segment (the input, ending at a guard page) and what every
// program then does with it: ringstat's statistics walk, the reaper, a consumer's attach,
// acquire and release, a producer's attach, claim and publish, all with timeout 0. A damaged
// segment must be refused or handled inside the mapping: any access outside it faults.
#include "fuzz_util.h"   // defines: FuzzBuf, fuzz_guarded
#include "proc_ident.h"  // defines: proc_start_time, proc_is_dead (replaced below)
#include "ring_layout.h" // defines: Ring, ring_attach_mapping

#include <stdio.h>

// Liveness by a rule instead of /proc: the tables of a fuzzed segment name arbitrary pids, and a
// /proc read for each of 320 entries per execution made the harness 20 times slower. A pid is
// alive when it is odd and its start time is the one this rule gives it (common/proc_ident.c is
// not linked into this harness; its own tests cover it).
uint64_t proc_start_time(int pid)
{
	return pid > 0 ? (uint64_t)pid * 7 : 0;
}
int proc_is_dead(int pid, uint64_t start)
{
	return pid <= 0 || !(pid & 1) || (start && start != (uint64_t)pid * 7);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzBuf b;
	if (fuzz_guarded(&b, data, size, 4096)) // a segment starts on a page
		return 0;
	Ring r;
	memset(&r, 0, sizeof r);
	snprintf(r.name, sizeof r.name, "fuzz");
	RingOpenOptions ro = {.read_only = 0};
	char err[256];
	if (ring_attach_mapping(&r, b.data, size, "fuzz", &ro, err, sizeof err) == 0) {
		RingStats st;
		RingProcStats procs[RING_MAX_PRODUCERS + RING_MAX_CONSUMERS];
		int np;
		ring_stats(&r, &st, procs, (int)(sizeof procs / sizeof procs[0]), &np);
		RingInfo info;
		ring_info(&r, &info);
		ring_reap(&r);
		size_t text_bytes = (size_t)info.geometry.text_len * sizeof(int32_t);
		for (uint32_t k = 0; k < info.ranks && k < 2; k++) {
			RingConsumer *c;
			if (ring_consumer_attach(&r, k, &c) != 0)
				continue;
			RingSlot s;
			if (ring_consumer_acquire(c, &s, 0) == 0) { // every byte of the slot is inside the segment
				volatile uint8_t x = s.payload[0] ^ s.payload[info.payload_bytes - 1];
				if (text_bytes)
					x ^= ((volatile uint8_t *)s.text)[text_bytes - 1];
				(void)x;
				ring_consumer_release(c, &s);
			}
			ring_consumer_detach(c);
		}
		RingProducer *p;
		if (ring_producer_attach(&r, 0, &p) == 0) {
			RingSlot s;
			if (ring_producer_claim(p, &s, 0) == 0) {
				s.payload[0] = 1;
				s.payload[info.payload_bytes - 1] = 2;
				if (text_bytes)
					((uint8_t *)s.text)[text_bytes - 1] = 3;
				ring_producer_publish(p, &s);
			}
			ring_producer_detach(p);
		}
	}
	fuzz_release(&b);
	return 0;
}
