// Ingest on the CPU backend: error slots are skipped and the batch filled from the following
// positions, bytes arrive unchanged, and a slot goes back to the ring only once its copy's event has
// completed (held "in flight" by a stand-in event query); the staging path releases at once.
#include <errno.h>  // defines: ETIMEDOUT
#include <stdio.h>  // defines: printf, fprintf
#include <string.h> // defines: memcmp

#include "kern_ops.h"       // defines: kern_ctx_create_cpu, kern_alloc
#include "ring_testutil.h"  // defines: test_fill_payload, test_check_payload
#include "trainer_ingest.h" // defines: TrainerIngest, trainer_ingest_open, trainer_ingest_batch

enum { T = 2, HW = 8, L = 4, S = 16, B = 4 };
static const uint64_t SEED = 77;

static int g_busy; // 1: every copy reads as still running

static int fake_query(KEvent *ev)
{
	return g_busy ? 0 : kern_event_query(ev);
}

// positions [from, to): every third one (g % 3 == 1) published as an error
static void produce(RingProducer *p, uint64_t from, uint64_t to)
{
	for (uint64_t g = from; g < to; g++) {
		RingSlot s;
		if (ring_producer_claim(p, &s, 1000) || s.position != g) {
			fprintf(stderr, "claim of %llu failed\n", (unsigned long long)g);
			exit(1);
		}
		if (g % 3 == 1) {
			ring_producer_publish_error(p, &s, 5);
			continue;
		}
		test_fill_payload(s.payload, (size_t)T * HW * HW * 3, s.text, L, SEED, g);
		for (int i = 0; i < L; i++)
			s.text[i] = (int32_t)((g * 7 + (uint64_t)i) % 100); // inside --vocab 100
		s.sample_id = 1000 + g;
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

static uint32_t reading(Ring *r)
{
	RingStats st;
	ring_stats(r, &st, NULL, 0, NULL);
	return st.reading;
}

// one batch: the good positions in order, their bytes, and how many slots the ring still lends
static void batch(TrainerIngest *in, Ring *r, KTensor *clips, KTensor *text, uint64_t *next_g, int staging)
{
	int64_t ids[B], pos[B];
	char err[512] = "";
	IngestBatch b = {.batch = B, .clips = clips, .text = text, .ids = ids, .pos = pos};
	KEvent *ready;
	kern_event_create(in->ctx, &ready);
	b.ready = ready;
	const uint64_t errors = in->errors;
	int rc = trainer_ingest_batch(in, &b, 0, 5.0, err, sizeof err);
	EXPECT(rc == 0, "trainer_ingest_batch: %d %s", rc, err);
	int skipped = 0;
	for (int k = 0; k < B; k++) {
		while (*next_g % 3 == 1) {
			(*next_g)++;
			skipped++;
		}
		const uint8_t *c = (const uint8_t *)clips->data + (size_t)k * T * HW * HW * 3;
		const int32_t *t = (const int32_t *)text->data + k * L;
		EXPECT(pos[k] == (int64_t)*next_g && ids[k] == (int64_t)(1000 + *next_g),
		       "row %d: position %lld id %lld, "
		       "want %llu",
		       k, (long long)pos[k], (long long)ids[k], (unsigned long long)*next_g);
		EXPECT(test_check_payload(c, (size_t)T * HW * HW * 3, (const int32_t[]){0}, 0, SEED, *next_g),
		       "row %d: clip bytes of position %llu differ", k, (unsigned long long)*next_g);
		for (int i = 0; i < L; i++)
			EXPECT(t[i] == (int32_t)((*next_g * 7 + (uint64_t)i) % 100), "row %d: token %d differs", k, i);
		(*next_g)++;
	}
	EXPECT(in->errors - errors == (uint64_t)skipped, "%llu error slots counted, %d skipped",
	       (unsigned long long)(in->errors - errors), skipped);
	// error slots go back at once; good ones only when their copy is done (staging: after the memcpy)
	EXPECT(reading(r) == (staging ? 0u : (uint32_t)B), "%u slots held after the batch (busy copies, staging %d)",
	       reading(r), staging);
	EXPECT(trainer_ingest_poll(in) == B, "the %d copies should still be in flight", B);
	g_busy = 0;
	EXPECT(trainer_ingest_poll(in) == 0, "copies done: none in flight");
	EXPECT(reading(r) == 0, "%u slots still held after their copies completed", reading(r));
	kern_event_destroy(ready);
}

static void run(const char *name, int staging)
{
	Ring *r = make_ring(name);
	RingProducer *p;
	if (ring_producer_attach(r, -1, &p)) {
		fprintf(stderr, "producer attach failed\n");
		exit(1);
	}
	KernCtx *ctx;
	kern_ctx_create_cpu(&ctx, 1);
	ModelConfig m = {.frames = T, .image_size = HW, .ctx_len = L, .vocab = 100};
	TrainerIngest in;
	char err[512] = "";
	int rc = trainer_ingest_open(&in, ctx, name, 0, 1, &m, staging ? INGEST_STAGING : 0, err, sizeof err);
	if (rc) {
		fprintf(stderr, "trainer_ingest_open: %s\n", err);
		exit(1);
	}
	EXPECT(!staging == !in.note[0], "staging %d but note '%s'", staging, in.note);
	in.event_query = fake_query;
	KTensor clips, text;
	kern_alloc(ctx, &clips, KDT_U8, 5, (const int64_t[]){B, T, HW, HW, 3});
	kern_alloc(ctx, &text, KDT_I32, 2, (const int64_t[]){B, L});
	// B is the caller's, checked against the buffers before a slot is taken
	int64_t ids[B], pos[B];
	IngestBatch wrong = {.batch = B + 1, .clips = &clips, .text = &text, .ids = ids, .pos = pos};
	rc = trainer_ingest_batch(&in, &wrong, 0, 5.0, err, sizeof err);
	EXPECT(rc == -EINVAL && strstr(err, "a batch of"), "a batch larger than its buffers: %d '%s'", rc, err);
	uint64_t g = 0;
	for (int k = 0; k < 3; k++) { // 3 batches: 12 good of 18 positions, more than S = 16 in all
		produce(p, (uint64_t)k * 6, (uint64_t)k * 6 + 6);
		g_busy = 1;
		batch(&in, r, &clips, &text, &g, staging);
	}
	kern_free(ctx, &clips);
	kern_free(ctx, &text);
	trainer_ingest_close(&in);
	ring_producer_detach(p);
	kern_ctx_destroy(ctx);
	ring_close(r);
	ring_destroy(name);
}

int main(void)
{
	atexit(test_ring_cleanup);
	char name[64];
	snprintf(name, sizeof name, "test-ingest-%d", (int)getpid());
	run(name, 0);
	snprintf(name, sizeof name, "test-ingest-st-%d", (int)getpid());
	run(name, 1);
	if (test_failures)
		return 1;
	printf("ingest: error slots skipped, bytes equal, slots released only after their copies (registered and staging)\n");
	return 0;
}
