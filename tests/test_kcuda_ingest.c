// The trainer's ingest pipeline (trainer/trainer_ingest.c) on the CUDA backend through the shim,
// as trainer_run.c drives it: the copy stream fills one of two batch buffers from the registered
// ring while the compute stream reads the other, ordered by the ready/freed events. Under
// asynchronous streams (KEMU_SCHED_SEED, make test's second run and make test-seeds) every byte
// must arrive and the stream-order checker must see no race. Planted bugs, each passing only if it
// is caught: --planted-no-wait leaves the compute stream's wait on `ready` out (it reads a batch
// still being copied), --planted-no-free the copy stream's wait on `freed` (it overwrites a
// buffer the last step may still read; the host checks nothing between the steps then, since a
// download would order the streams itself).
#include <stdio.h>  // defines: printf, fprintf
#include <stdlib.h> // defines: exit, atexit
#include <string.h> // defines: strcmp

#include "kern_ops.h"       // defines: kern_ctx_create, kern_alloc, kern_copy, kern_download, kern_event_*
#include "ring_testutil.h"  // defines: test_fill_payload, test_check_payload, test_ring_cleanup
#include "trainer_ingest.h" // defines: TrainerIngest, trainer_ingest_open, trainer_ingest_batch

enum { T = 2, HW = 8, L = 4, S = 16, B = 4, STEPS = 6 };
static const uint64_t SEED = 91;

// the shim's (emu/kemu.h); weak, so that a build without it links and skips
void kemu_sched_c(uint64_t seed) __attribute__((weak));

static void produce(RingProducer *p, uint64_t from, uint64_t to)
{
	for (uint64_t g = from; g < to; g++) {
		RingSlot s;
		if (ring_producer_claim(p, &s, 1000) || s.position != g) {
			fprintf(stderr, "claim of %llu failed\n", (unsigned long long)g);
			exit(1);
		}
		test_fill_payload(s.payload, (size_t)T * HW * HW * 3, s.text, L, SEED, g);
		for (int i = 0; i < L; i++)
			s.text[i] = (int32_t)((g * 7 + (uint64_t)i) % 100);
		s.sample_id = g;
		ring_producer_publish(p, &s);
	}
}

static Ring *make_ring(const char *name)
{
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = T, .height = HW, .width = HW, .channels = 3, .text_len = L};
	o.slots = S;
	o.ranks = 1;
	o.seed = SEED;
	o.replace = 1;
	char err[256] = "";
	Ring *r = NULL;
	if (ring_create(&r, name, &o, err, sizeof err)) {
		fprintf(stderr, "ring_create(%s): %s\n", name, err);
		exit(1);
	}
	snprintf(test_ring_created, sizeof test_ring_created, "%s", name);
	return r;
}

typedef struct {
	KernCtx *ctx;
	TrainerIngest in;
	RingProducer *prod;
	KTensor clips[2], text[2], snap_clips, snap_text;
	KEvent *ready[2], *freed[2];
	int64_t ids[B], pos[B];
} Pipe;

static int fill(Pipe *p, int step, int wait_freed)
{
	char err[512] = "";
	const int i = step & 1;
	produce(p->prod, (uint64_t)step * B, (uint64_t)(step + 1) * B);
	IngestBatch b = {.batch = B,
			 .clips = &p->clips[i],
			 .text = &p->text[i],
			 .ids = p->ids,
			 .pos = p->pos,
			 .free_ev = wait_freed ? p->freed[i] : NULL,
			 .ready = p->ready[i]};
	int rc = trainer_ingest_batch(&p->in, &b, 0, 5.0, err, sizeof err);
	if (rc)
		fprintf(stderr, "step %d: trainer_ingest_batch: %d %s\n", step, rc, err);
	return rc;
}

// the "step": the compute stream copies the batch out, then frees the buffer for the next fill
static int consume(Pipe *p, int step, int wait)
{
	const int i = step & 1;
	int rc = wait ? kern_stream_wait_event(p->ctx, p->ready[i]) : 0;
	rc = rc ? rc : kern_copy(p->ctx, &p->snap_clips, &p->clips[i]);
	rc = rc ? rc : kern_copy(p->ctx, &p->snap_text, &p->text[i]);
	return rc ? rc : kern_event_record(p->freed[i], p->ctx);
}

static int check(Pipe *p, int step)
{
	static uint8_t clips[B * T * HW * HW * 3];
	static int32_t text[B * L];
	int rc = kern_download(p->ctx, clips, sizeof clips, &p->snap_clips);
	rc = rc ? rc : kern_download(p->ctx, text, sizeof text, &p->snap_text);
	if (rc)
		return rc;
	for (int k = 0; k < B; k++) {
		uint64_t g = (uint64_t)step * B + (uint64_t)k;
		EXPECT(test_check_payload(clips + (size_t)k * T * HW * HW * 3, (size_t)T * HW * HW * 3,
					  (const int32_t[]){0}, 0, SEED, g),
		       "step %d row %d: clip bytes of position %llu differ", step, k, (unsigned long long)g);
		EXPECT(text[k * L] == (int32_t)(g * 7 % 100), "step %d row %d: tokens differ", step, k);
	}
	return 0;
}

static int open_pipe(Pipe *p, const char *ring)
{
	KCtxOptions o = {.backend = KERN_BACKEND_CUDA, .threads = 1, .attention = KERN_ATTN_OWN};
	int rc = kern_ctx_create(&p->ctx, &o);
	if (rc)
		return rc;
	ModelConfig m = {.frames = T, .image_size = HW, .ctx_len = L, .vocab = 100};
	char err[512] = "";
	if ((rc = trainer_ingest_open(&p->in, p->ctx, ring, 0, 1, &m, 0, err, sizeof err))) {
		fprintf(stderr, "trainer_ingest_open: %s\n", err);
		return rc;
	}
	const int64_t cs[5] = {B, T, HW, HW, 3}, ts[2] = {B, L};
	for (int i = 0; i < 2 && !rc; i++) {
		rc = kern_alloc(p->ctx, &p->clips[i], KDT_U8, 5, cs) ||
		     kern_alloc(p->ctx, &p->text[i], KDT_I32, 2, ts) || kern_event_create(p->ctx, &p->ready[i]) ||
		     kern_event_create(p->ctx, &p->freed[i]);
	}
	rc = rc || kern_alloc(p->ctx, &p->snap_clips, KDT_U8, 5, cs) ||
	     kern_alloc(p->ctx, &p->snap_text, KDT_I32, 2, ts);
	return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	const int no_wait = argc > 1 && !strcmp(argv[1], "--planted-no-wait");
	const int no_free = argc > 1 && !strcmp(argv[1], "--planted-no-free");
	const int planted = no_wait || no_free;
	if (!kemu_sched_c) {
		printf("not linked with the shim: skipped\n");
		return 77;
	}
	if (planted)
		kemu_sched_c(SEED); // the planted bug needs the asynchronous streams
	atexit(test_ring_cleanup);
	char name[64];
	snprintf(name, sizeof name, "test-kcuda-ingest-%d", (int)getpid());
	Ring *r = make_ring(name);
	Pipe p = {0};
	if (ring_producer_attach(r, -1, &p.prod) || open_pipe(&p, name)) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	int rc = fill(&p, 0, !no_free);
	for (int step = 0; step < STEPS && !rc; step++) {
		rc = consume(&p, step, !no_wait);
		rc = rc ? rc : step + 1 < STEPS ? fill(&p, step + 1, !no_free) : 0; // overlaps this step
		rc = rc ? rc : no_free ? 0 : check(&p, step);
	}
	if (planted) {
		rc = rc ? rc : kern_sync(p.ctx);
		printf("planted missing wait on `%s`: %s (rc %d)\n", no_wait ? "ready" : "freed",
		       rc ? "caught" : "NOT caught", rc);
		return rc ? 0 : 1;
	}
	EXPECT(rc == 0, "the pipeline failed: %d", rc);
	kern_sync(p.ctx);
	trainer_ingest_close(&p.in);
	ring_producer_detach(p.prod);
	for (int i = 0; i < 2; i++) {
		kern_event_destroy(p.ready[i]);
		kern_event_destroy(p.freed[i]);
		kern_free(p.ctx, &p.clips[i]);
		kern_free(p.ctx, &p.text[i]);
	}
	kern_free(p.ctx, &p.snap_clips);
	kern_free(p.ctx, &p.snap_text);
	kern_ctx_destroy(p.ctx);
	ring_close(r);
	ring_destroy(name);
	if (test_failures)
		return 1;
	printf("ingest on the CUDA backend: %d batches through two buffers, every byte in place\n", STEPS);
	return 0;
}
