// Two decoders on one clip (LdDecodeOpts.clip_decoders 2): the GOPs of a chunk that a clip needs
// are cut in two by the bytes they send, the later ones go to a helper thread with its own decoder
// contexts, the earlier ones stay on the caller's. Design note: one job at a time per helper,
// handed over under a mutex (state IDLE -> POSTED -> DONE -> IDLE); the caller always waits for
// DONE before it returns, so the job's buffers, frames and destinations outlive the helper's use
// of them, and the two halves write disjoint destinations. Each GOP starts on a flushed context
// (closed GOPs), so the frames are the bytes the serial path makes. Errors: the caller's (earlier)
// GOPs' first, as the serial path would stop there; the helper finishes its half regardless
// (bounded by the same watchdog and cancel flag). The helper's thread CPU per job is added to
// LdCost.helper_ns, so clips per CPU-second stay honest. It does not make a clip cheaper, only
// sooner: two cores on one clip.
#include "ld_decoder_priv.h" // defines: LdDecoder, LdHelper, ld_decode_gops, ld_split_decode, ld_split_free
#include "proc_time.h"       // defines: time_thread_cpu_ns

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IDLE, POSTED, DONE, QUIT };

struct LdHelper {
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int state;
	LdDecoder *d; // the helper's own contexts, frames and scaler
	// the job
	const LdBuffer *bufs;
	int n_bufs;
	const LdChunkInfo *ci;
	const LdGop *gops;
	int ng;
	const uint32_t *frames;
	int n;
	uint8_t *const *dst;
	LdDecodeOpts o;
	int timing;
	// its result
	int rc, delivered;
	uint64_t cpu_ns;
	char err[256];
};

static void *helper_main(void *arg)
{
	LdHelper *h = arg;
	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (h->state == IDLE || h->state == DONE)
			pthread_cond_wait(&h->cv, &h->mu);
		if (h->state == QUIT)
			break;
		pthread_mutex_unlock(&h->mu);
		uint64_t c0 = time_thread_cpu_ns();
		ld_decoder_timing(h->d, h->timing);
		h->rc = ld_decode_gops(h->d, h->bufs, h->n_bufs, h->ci, h->gops, h->ng, h->frames, h->n, h->dst, &h->o,
				       &h->delivered, h->err, sizeof(h->err));
		h->cpu_ns = time_thread_cpu_ns() - c0;
		pthread_mutex_lock(&h->mu);
		h->state = DONE;
		pthread_cond_broadcast(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static LdHelper *helper_start(void)
{
	LdHelper *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	if (ld_decoder_new(&h->d) != 0) {
		free(h);
		return NULL;
	}
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	if (pthread_create(&h->tid, NULL, helper_main, h) != 0) {
		pthread_cond_destroy(&h->cv);
		pthread_mutex_destroy(&h->mu);
		ld_decoder_free(h->d);
		free(h);
		return NULL;
	}
	return h;
}

void ld_split_free(LdHelper *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->state = QUIT;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->tid, NULL);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	ld_decoder_free(h->d);
	free(h);
}

// the first GOP of the later half: the cut that leaves the earlier half nearest to half the work
// (bytes sent, plus a per-packet share for the work every frame has), at least one GOP each side
static int cut_of(const LdChunkInfo *ci, const LdGop *gops, int ng, const uint32_t *frames, int n)
{
	uint64_t w[LD_MAX_FRAMES], total = 0;
	for (int g = 0; g < ng; g++) {
		w[g] = 0;
		for (uint32_t j = gops[g].first; j <= gops[g].last; j++)
			if (ld_gop_sends(&ci->packets[j], frames, n))
				w[g] += ci->packets[j].size + 2048;
		total += w[g];
	}
	int cut = 1;
	uint64_t run = w[0], best = run > total / 2 ? run - total / 2 : total / 2 - run;
	for (int g = 1; g < ng - 1; g++) {
		run += w[g];
		uint64_t off = run > total / 2 ? run - total / 2 : total / 2 - run;
		if (off < best)
			best = off, cut = g + 1;
	}
	return cut;
}

int ld_split_decode(LdDecoder *d, const LdBuffer *bufs, int n_bufs, const LdChunkInfo *ci, const LdGop *gops, int ng,
		    const uint32_t *frames, int n, uint8_t *const *dst, const LdDecodeOpts *o, int *delivered,
		    char *err, size_t errlen)
{
	if (!d->helper && !(d->helper = helper_start())) // no thread to be had: the same bytes serially
		return ld_decode_gops(d, bufs, n_bufs, ci, gops, ng, frames, n, dst, o, delivered, err, errlen);
	LdHelper *h = d->helper;
	int cut = cut_of(ci, gops, ng, frames, n);
	pthread_mutex_lock(&h->mu);
	h->bufs = bufs, h->n_bufs = n_bufs, h->ci = ci, h->gops = gops + cut, h->ng = ng - cut;
	h->frames = frames, h->n = n, h->dst = dst, h->o = *o, h->timing = d->timing;
	h->state = POSTED;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	int mine = 0;
	int rc = ld_decode_gops(d, bufs, n_bufs, ci, gops, cut, frames, n, dst, o, &mine, err, errlen);
	pthread_mutex_lock(&h->mu);
	while (h->state != DONE)
		pthread_cond_wait(&h->cv, &h->mu);
	h->state = IDLE;
	pthread_mutex_unlock(&h->mu);
	// the helper's accounts join the caller's
	ld_cost_add(&d->cost, &h->d->cost);
	memset(&h->d->cost, 0, sizeof(h->d->cost));
	d->frames_decoded += h->d->frames_decoded;
	h->d->frames_decoded = 0;
	if (d->timing)
		d->cost.helper_ns += h->cpu_ns;
	if (!rc && h->rc) {
		snprintf(err, errlen, "%s", h->err);
		rc = h->rc;
	}
	*delivered = mine + h->delivered;
	return rc;
}
