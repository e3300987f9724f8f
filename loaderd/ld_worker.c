// The loader thread. Design note: a thread owns one RingProducer, one LdReader and one
// LdDecoder and keeps up to queue-depth claimed positions in flight: their reads are queued
// (io_uring) as soon as they are claimed, and whichever sample's reads finish first is decoded
// into its slot. Guarantees: every claimed position is published (data or error) before the
// thread detaches, unless the process dies, in which case the ring lets a live producer adopt
// it. Not guaranteed: publication in position order (the ring does not need it). A sample
// whose watchdog ran out while the process was stopped or not scheduled (ld_stall) is decoded
// again, a bounded number of times, instead of being published as a timeout: a pause of the
// process's own making must not turn a good sample into an error slot and change the run.
#include "ld_worker.h" // defines: ld_worker_main

#include "loader.h"    // defines: ld_clip_decode, LdBuffer, ld_error_name, LdReader, LdRead, ld_reader_*
#include "ld_stall.h"  // defines: ld_stall_start, ld_stall_paused_ns
#include "log.h"       // defines: log_info, log_warnx
#include "proc_time.h" // defines: time_mono_ns
#include "stream.h"    // defines: stream_node_position

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if HAVE_NUMA
#include <numa.h>
#endif

#define LD_PAUSE_REDOS 3 // decodes again of one sample after pauses; then its timeout stands

typedef struct {
	int busy;
	RingSlot slot;
	LdPlan plan;
	LdRead reads[LD_MAX_RANGES]; // one per plan range
	int pending;
	int error;
	char reason[300];
} Item;

// logs a sample's error the first time this process sees that sample fail
static void log_error_once(LdShared *sh, const Item *it)
{
	uint64_t key = it->plan.sample + 1;
	int fresh = 1;
	pthread_mutex_lock(&sh->elog_lock);
	if (sh->elog_cap) {
		size_t h = (size_t)(key * 0x9E3779B97F4A7C15ull) % sh->elog_cap;
		for (size_t k = 0; k < sh->elog_cap; k++, h = (h + 1) % sh->elog_cap) {
			if (sh->elog[h] == key) {
				fresh = 0;
				break;
			}
			if (!sh->elog[h]) {
				sh->elog[h] = key;
				break;
			}
		}
	}
	pthread_mutex_unlock(&sh->elog_lock);
	if (fresh)
		log_warnx("position %llu sample %llu: %s (code %d): %s", (unsigned long long)it->slot.position,
			  (unsigned long long)it->plan.sample, ld_error_name(it->error), -it->error, it->reason);
}

static void fill_text(LdShared *sh, RingSlot *s, uint64_t sample)
{
	RingInfo info;
	ring_info(sh->ring, &info);
	uint32_t n = info.geometry.text_len, ctx = manifest_header(sh->m)->context;
	const uint16_t *tok = manifest_tokens(sh->m, sample);
	for (uint32_t i = 0; i < n; i++)
		s->text[i] = i < ctx && tok ? tok[i] : 0;
}

// the sample's class labels from the manifest (RING_NO_LABEL for a caption-only dataset)
static void fill_labels(LdShared *sh, RingSlot *s, uint64_t sample)
{
	int32_t l[MANIFEST_MAX_HEADS];
	manifest_labels(sh->m, sample, l);
	for (int k = 0; k < RING_LABELS; k++)
		s->labels[k] = k < (int)MANIFEST_MAX_HEADS ? l[k] : RING_NO_LABEL;
}

// 1 when the sample that started decoding at t0 and has just timed out would still have been
// inside its budget had the process been running: it was paused, not hung (logged)
static int paused_not_hung(const LdShared *sh, const Item *it, uint64_t t0)
{
	uint64_t t1 = time_mono_ns();
	uint64_t paused = ld_stall_paused_ns(t0, t1), took = t1 - t0;
	if (!paused || took - (paused < took ? paused : took) >= (uint64_t)sh->params.timeout_ms * 1000000ull)
		return 0;
	log_warnx("position %llu: paused %llu ms (stopped or not scheduled) during sample %llu; decoding it again",
		  (unsigned long long)it->slot.position, (unsigned long long)(paused / 1000000ull),
		  (unsigned long long)it->plan.sample);
	return 1;
}

static void decode(LdShared *sh, LdDecoder *d, Item *it)
{
	LdBuffer bufs[LD_MAX_RANGES];
	for (int i = 0; i < it->plan.n_ranges; i++)
		bufs[i] = (LdBuffer){it->reads[i].buf, it->reads[i].size, it->plan.ranges[i].offset};
	for (int redo = 0;; redo++) {
		uint64_t t0 = time_mono_ns();
		it->error = ld_clip_decode(d, sh->m, &it->plan, &sh->params, bufs, it->slot.payload, it->reason,
					   sizeof(it->reason));
		if (it->error != -LD_ERR_TIMEOUT || atomic_load(&sh->cancel) || redo == LD_PAUSE_REDOS ||
		    !paused_not_hung(sh, it, t0))
			return;
	}
}

static void publish(LdShared *sh, RingProducer *p, LdDecoder *d, Item *it)
{
	RingSlot *s = &it->slot;
	s->sample_id = it->plan.sample;
	if (!it->error && !atomic_load(&sh->cancel))
		decode(sh, d, it);
	if (atomic_load(&sh->cancel)) { // stopping now: the position stays claimed, and a live producer adopts it
		it->busy = 0;
		return;
	}
	int rc;
	if (it->error) {
		log_error_once(sh, it);
		rc = ring_producer_publish_error(p, s, -it->error);
		atomic_fetch_add(&sh->errors, 1);
	} else {
		s->crop[0] = (uint16_t)it->plan.crop.x;
		s->crop[1] = (uint16_t)it->plan.crop.y;
		s->crop[2] = (uint16_t)it->plan.crop.w;
		s->crop[3] = (uint16_t)it->plan.crop.h;
		fill_text(sh, s, it->plan.sample);
		fill_labels(sh, s, it->plan.sample);
		rc = ring_producer_publish(p, s);
		atomic_fetch_add(&sh->produced, 1);
	}
	if (rc)
		log_warnx("position %llu: publish: %s", (unsigned long long)s->position, strerror(-rc));
	it->busy = 0;
}

// plans a claimed position and queues its reads; an unplannable one is published as an error
static void start_item(LdShared *sh, LdReader *rd, RingProducer *p, LdDecoder *d, Item *it)
{
	it->busy = 1;
	const uint64_t g = stream_node_position(it->slot.position, sh->ring_ranks, (uint32_t)sh->cfg->node,
						(uint32_t)sh->cfg->nodes);
	it->error = ld_plan_make(sh->m, g, &sh->params, &it->plan, it->reason, sizeof(it->reason));
	it->pending = 0;
	if (it->error) {
		publish(sh, p, d, it);
		return;
	}
	for (int k = 0; k < it->plan.n_sources; k++) {
		const LdSource *src = &it->plan.src[k];
		for (int i = src->first_range; i < src->first_range + src->n_ranges; i++) {
			LdRead *r = &it->reads[i];
			r->path = src->path;
			r->offset = it->plan.ranges[i].offset;
			r->length = it->plan.ranges[i].length;
			r->expect_size = src->file_size;
			r->user = it;
			if (ld_reader_submit(rd, r) == 0)
				it->pending++;
		}
	}
}

static void pin_numa(LdShared *sh)
{
#if HAVE_NUMA
	int node = sh->cfg->numa_node;
	if (node >= 0 && numa_available() >= 0 && numa_max_node() > 0) {
		numa_run_on_node(node);
		numa_set_preferred(node);
	}
#else
	(void)sh;
#endif
}

void *ld_worker_main(void *arg)
{
	LdWorker *w = arg;
	LdShared *sh = w->sh;
	pin_numa(sh);
	int stall = ld_stall_start();
	if (stall && w->index == 0)
		log_warnx("no stall ticker (%s): a sample paused past --timeout-ms becomes a timeout",
			  strerror(-stall));
	int q = sh->cfg->queue_depth;
	Item *items = calloc((size_t)q, sizeof(Item));
	LdReader *rd = NULL;
	LdDecoder *d = NULL;
	RingProducer *p = NULL;
	char why[160];
	w->rc = !items ? -ENOMEM
		       : ld_reader_new(&rd, (unsigned)(q * LD_MAX_RANGES), !strcmp(sh->cfg->io, "pread"), why,
				       sizeof(why));
	if (!w->rc && !strcmp(ld_reader_kind(rd), "pread") && !atomic_exchange(&sh->pread_noted, 1))
		log_info("reading with pread: %s", why);
	if (!w->rc && ld_decoder_new(&d) != 0)
		w->rc = -ENOMEM;
	if (!w->rc)
		ld_decoder_timing(d, sh->timing);
	if (!w->rc)
		w->rc = ring_producer_attach(sh->ring, sh->cfg->numa_node, &p);
	if (w->rc) {
		log_warnx("thread %d: cannot start: %s", w->index, strerror(-w->rc));
		goto out;
	}
	int busy = 0, shutdown = 0;
	for (;;) {
		int stopping = atomic_load(&sh->stop) || shutdown;
		// claim while there is room; wait for space only when nothing else is in flight
		for (int i = 0; i < q && !stopping; i++) {
			if (items[i].busy)
				continue;
			int rc = ring_producer_claim(p, &items[i].slot, busy ? 0 : 100);
			if (rc == -ETIMEDOUT)
				break;
			if (rc == -ESHUTDOWN || rc == -EPROTO) {
				if (rc == -EPROTO) // the ring's slot words are damaged: nothing it says can be trusted
					atomic_store(&sh->damaged, 1);
				shutdown = 1;
				break;
			}
			if (rc) {
				log_warnx("thread %d: claim: %s", w->index, strerror(-rc));
				break;
			}
			start_item(sh, rd, p, d, &items[i]);
		}
		ring_producer_heartbeat(p);
		busy = 0;
		for (int i = 0; i < q; i++)
			busy += items[i].busy;
		if (!busy) {
			if (stopping)
				break;
			continue;
		}
		LdRead *done;
		if (ld_reader_wait(rd, &done) != 0) { // nothing in flight: items with no reads left
			for (int i = 0; i < q; i++)
				if (items[i].busy && !items[i].pending)
					publish(sh, p, d, &items[i]);
			continue;
		}
		Item *it = done->user;
		it->pending--;
		if (done->error && !it->error) {
			it->error = done->error;
			snprintf(it->reason, sizeof(it->reason), "%s", done->reason);
		}
		if (!it->pending)
			publish(sh, p, d, it);
	}
	ring_producer_detach(p);
	if (sh->timing) {
		pthread_mutex_lock(&sh->cost_lock);
		ld_cost_add(&sh->cost, ld_decoder_cost(d));
		pthread_mutex_unlock(&sh->cost_lock);
	}
out:
	atomic_fetch_sub(&sh->running, 1);
	if (items)
		for (int i = 0; i < q; i++)
			for (int k = 0; k < LD_MAX_RANGES; k++)
				free(items[i].reads[k].buf);
	free(items);
	ld_reader_free(rd);
	ld_decoder_free(d);
	return NULL;
}
