// Ingest of class labels (ring ABI 4): each clip's labels arrive beside its text, in the host
// array and the (B, 2) device tensor, row for row with the positions (error slots skipped), on the
// registered and the staging path; a claimed slot starts without labels (never the labels of the
// position the slot held before); a label outside its head's classes is refused (-ERANGE).
// --read RING N (for tests/test_prep_labels_e2e.sh): rank 0 of RING ingests N clips and prints
// "position sample label0 label1" per row.
#include <errno.h>  // defines: ERANGE
#include <stdio.h>  // defines: printf, fprintf
#include <stdlib.h> // defines: atoi, calloc, free
#include <string.h> // defines: strstr

#include "kern_ops.h"       // defines: kern_ctx_create_cpu, kern_alloc
#include "ring_testutil.h"  // defines: EXPECT, test_ring_cleanup, test_ring_created
#include "trainer_ingest.h" // defines: TrainerIngest, trainer_ingest_open, trainer_ingest_batch

enum { T = 1, HW = 4, L = 3, S = 8, B = 3 };
static uint64_t g_labelled_until; // positions below it were produced with labels

// the labels position g carries: verb g % 7, noun g % 5 except every fourth position has none
static void want_labels(uint64_t g, int32_t out[2])
{
	out[0] = (int32_t)(g % 7);
	out[1] = g % 4 == 3 ? RING_NO_LABEL : (int32_t)(g % 5);
}

// positions [from, to): g % 5 == 2 an error slot; with_labels 0: the producer sets none
static void produce(RingProducer *p, uint64_t from, uint64_t to, int with_labels, int32_t bad)
{
	for (uint64_t g = from; g < to; g++) {
		RingSlot s;
		if (ring_producer_claim(p, &s, 1000) || s.position != g) {
			fprintf(stderr, "claim of %llu failed\n", (unsigned long long)g);
			exit(1);
		}
		EXPECT(s.labels[0] == RING_NO_LABEL && s.labels[1] == RING_NO_LABEL,
		       "position %llu claimed with labels %d %d (the slot's last position's)", (unsigned long long)g,
		       s.labels[0], s.labels[1]);
		if (g % 5 == 2) {
			ring_producer_publish_error(p, &s, 5);
			continue;
		}
		for (int i = 0; i < L; i++)
			s.text[i] = 1 + (int32_t)i;
		s.sample_id = g;
		if (with_labels)
			want_labels(g, s.labels);
		if (bad)
			s.labels[1] = bad;
		ring_producer_publish(p, &s);
	}
}

// one batch of B: its rows' labels (host and device) are their positions'
static void check_batch(TrainerIngest *in, KTensor *clips, KTensor *text, KTensor *lab, int with_labels)
{
	int64_t ids[B], pos[B];
	int32_t host[B * 2];
	char err[512] = "";
	IngestBatch b = {
		.batch = B, .clips = clips, .text = text, .ids = ids, .pos = pos, .labels = host, .label_ids = lab};
	int rc = trainer_ingest_batch(in, &b, 0, 5.0, err, sizeof err);
	EXPECT(rc == 0, "trainer_ingest_batch: %d %s", rc, err);
	const int32_t *dev = (const int32_t *)lab->data; // the CPU backend's device memory is the host's
	for (int k = 0; k < B && !rc; k++) {
		int32_t w[2] = {RING_NO_LABEL, RING_NO_LABEL};
		if (with_labels || (uint64_t)pos[k] < g_labelled_until)
			want_labels((uint64_t)pos[k], w);
		EXPECT(pos[k] % 5 != 2, "row %d: error position %lld delivered", k, (long long)pos[k]);
		EXPECT(host[2 * k] == w[0] && host[2 * k + 1] == w[1],
		       "row %d (position %lld): host labels %d %d, want %d %d", k, (long long)pos[k], host[2 * k],
		       host[2 * k + 1], w[0], w[1]);
		EXPECT(dev[2 * k] == w[0] && dev[2 * k + 1] == w[1],
		       "row %d (position %lld): device labels %d %d, want %d %d", k, (long long)pos[k], dev[2 * k],
		       dev[2 * k + 1], w[0], w[1]);
	}
}

static void run(const char *name, int staging)
{
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.geometry = (RingGeometry){.frames = T, .height = HW, .width = HW, .channels = 3, .text_len = L};
	o.slots = S, o.ranks = 1, o.seed = 5, o.replace = 1;
	char err[512] = "";
	Ring *r = NULL;
	RingProducer *p;
	if (ring_create(&r, name, &o, err, sizeof err) || ring_producer_attach(r, -1, &p)) {
		fprintf(stderr, "ring %s: %s\n", name, err);
		exit(1);
	}
	snprintf(test_ring_created, sizeof test_ring_created, "%s", name);
	KernCtx *ctx;
	kern_ctx_create_cpu(&ctx, 1);
	ModelConfig m = {.frames = T, .image_size = HW, .ctx_len = L, .vocab = 10};
	TrainerIngest in;
	if (trainer_ingest_open(&in, ctx, name, 0, 1, &m, staging ? INGEST_STAGING : 0, err, sizeof err)) {
		fprintf(stderr, "trainer_ingest_open: %s\n", err);
		exit(1);
	}
	trainer_ingest_set_classes(&in, 2, (const int[]){7, 5});
	KTensor clips, text, lab;
	kern_alloc(ctx, &clips, KDT_U8, 5, (const int64_t[]){B, T, HW, HW, 3});
	kern_alloc(ctx, &text, KDT_I32, 2, (const int64_t[]){B, L});
	kern_alloc(ctx, &lab, KDT_I32, 2, (const int64_t[]){B, 2});
	uint64_t g = 0;
	g_labelled_until = 0;
	for (int k = 0; k < 4; k++, g += 4) { // 16 positions over 8 slots: every slot reused
		produce(p, g, g + 4, 1, 0);
		check_batch(&in, &clips, &text, &lab, 1);
	}
	g_labelled_until = g;
	produce(p, g, g + 4, 0, 0); // a producer that sets no labels: none arrive, not the slots' old ones
	check_batch(&in, &clips, &text, &lab, 0);
	g += 4;
	produce(p, g, g + 1, 1, 5); // noun 5 of 5 classes
	int64_t ids[B], pos[B];
	IngestBatch bad = {.batch = B, .clips = &clips, .text = &text, .ids = ids, .pos = pos, .label_ids = &lab};
	int rc = trainer_ingest_batch(&in, &bad, 0, 5.0, err, sizeof err);
	EXPECT(rc == -ERANGE && strstr(err, "label 5 of head 1 outside its 5 classes"),
	       "a label past its head: %d '%s'", rc, err);
	kern_free(ctx, &clips), kern_free(ctx, &text), kern_free(ctx, &lab);
	trainer_ingest_close(&in);
	ring_producer_detach(p);
	kern_ctx_destroy(ctx);
	ring_close(r);
	ring_destroy(name);
}

// --read: the ring's geometry is the model's; one batch of n, printed row by row
static int read_ring(const char *name, int n)
{
	Ring *r;
	RingInfo info;
	char err[512] = "";
	if (ring_open(&r, name, &(RingOpenOptions){.read_only = 1}, err, sizeof err)) {
		fprintf(stderr, "ring %s: %s\n", name, err);
		return 1;
	}
	ring_info(r, &info);
	ring_close(r);
	const RingGeometry *g = &info.geometry;
	ModelConfig m = {
		.frames = (int)g->frames, .image_size = (int)g->height, .ctx_len = (int)g->text_len, .vocab = 65536};
	KernCtx *ctx;
	TrainerIngest in;
	kern_ctx_create_cpu(&ctx, 1);
	if (trainer_ingest_open(&in, ctx, name, 0, 1, &m, 0, err, sizeof err)) {
		fprintf(stderr, "trainer_ingest_open: %s\n", err);
		return 1;
	}
	KTensor clips, text, lab;
	kern_alloc(ctx, &clips, KDT_U8, 5, (const int64_t[]){n, g->frames, g->height, g->width, 3});
	kern_alloc(ctx, &text, KDT_I32, 2, (const int64_t[]){n, g->text_len});
	kern_alloc(ctx, &lab, KDT_I32, 2, (const int64_t[]){n, 2});
	int64_t *ids = calloc((size_t)n, sizeof *ids), *pos = calloc((size_t)n, sizeof *pos);
	int32_t *host = calloc((size_t)n * 2, sizeof *host);
	IngestBatch b = {
		.batch = n, .clips = &clips, .text = &text, .ids = ids, .pos = pos, .labels = host, .label_ids = &lab};
	int rc = trainer_ingest_batch(&in, &b, 0, 60.0, err, sizeof err);
	if (rc)
		fprintf(stderr, "trainer_ingest_batch: %s\n", err);
	const int32_t *dev = (const int32_t *)lab.data;
	for (int k = 0; k < n && !rc; k++) {
		if (dev[2 * k] != host[2 * k] || dev[2 * k + 1] != host[2 * k + 1])
			rc = fprintf(stderr, "row %d: device labels differ from the host's\n", k) > 0;
		printf("%lld %lld %d %d\n", (long long)pos[k], (long long)ids[k], host[2 * k], host[2 * k + 1]);
	}
	kern_free(ctx, &clips), kern_free(ctx, &text), kern_free(ctx, &lab);
	free(ids), free(pos), free(host);
	trainer_ingest_close(&in);
	kern_ctx_destroy(ctx);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--read"))
		return read_ring(argv[2], atoi(argv[3]));
	atexit(test_ring_cleanup);
	char name[64];
	snprintf(name, sizeof name, "test-ingest-lab-%d", (int)getpid());
	run(name, 0);
	snprintf(name, sizeof name, "test-ingest-lab-st-%d", (int)getpid());
	run(name, 1);
	if (test_failures)
		return 1;
	printf("ingest: labels beside the text, host and device, registered and staging; claims start without; "
	       "out of range refused\n");
	return 0;
}
