// Ring consumer side of the trainer: each slot's clip and tokens are copied to the device from
// the registered ring mapping; the slot is released as soon as an event after its copy completes
// (at once on the CPU backend), so a rank holds few slots and never starves a ring.
#include "trainer_ingest.h" // defines: TrainerIngest, ...

#include <errno.h>  // defines: ENOENT, EINVAL, ERANGE, ETIMEDOUT, ESHUTDOWN, ECANCELED
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: memcpy, memset, strerror
#include <time.h>   // defines: clock_gettime

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int trainer_ingest_open(TrainerIngest *in, KernCtx *ctx, const char *ring, int rank, int ranks, const ModelConfig *m,
			char *err, size_t errlen)
{
	memset(in, 0, sizeof(*in));
	snprintf(in->name, sizeof in->name, "%s", ring);
	char why[256] = "";
	int rc = ring_open(&in->ring, ring, NULL, why, sizeof why);
	if (rc < 0) {
		if (rc == -ENOENT)
			snprintf(err, errlen, "ring '%s' does not exist (create it with tools/ringctl create or tools/launch.sh)", ring);
		else
			snprintf(err, errlen, "cannot open ring '%s': %s", ring, why[0] ? why : strerror(-rc));
		return rc;
	}
	RingInfo info;
	ring_info(in->ring, &info);
	RingGeometry want = { .frames = (uint32_t)m->frames, .height = (uint32_t)m->image_size,
			      .width = (uint32_t)m->image_size, .channels = 3, .text_len = (uint32_t)m->ctx_len };
	if (!ring_geometry_equal(&info.geometry, &want)) {
		char have[96], need[96];
		ring_geometry_format(&info.geometry, have, sizeof have);
		ring_geometry_format(&want, need, sizeof need);
		snprintf(err, errlen, "ring '%s' carries clips of %s but the model wants %s (--frames, --image-size, --ctx-len)",
			 ring, have, need);
		trainer_ingest_close(in);
		return -EINVAL;
	}
	if ((int)info.ranks != ranks) {
		snprintf(err, errlen, "ring '%s' serves %u ranks but this run has --ranks %d", ring, info.ranks, ranks);
		trainer_ingest_close(in);
		return -EINVAL;
	}
	if ((rc = ring_consumer_attach(in->ring, (uint32_t)rank, &in->cons)) < 0) {
		if (rc == -EBUSY)
			snprintf(err, errlen, "rank %d of ring '%s' is held by another live trainer", rank, ring);
		else
			snprintf(err, errlen, "cannot attach to ring '%s' as rank %d: %s", ring, rank, strerror(-rc));
		trainer_ingest_close(in);
		return rc;
	}
	in->geom = info.geometry;
	in->seed = info.seed;
	in->vocab = m->vocab;
	in->clip_bytes = (size_t)ring_payload_bytes(&info.geometry);
	// a consumer holding S/N slots blocks itself: stay below
	in->fly_cap = (int)(info.slots / info.ranks) - 1;
	in->fly_cap = in->fly_cap < 1 ? 1 : in->fly_cap > INGEST_MAX_INFLIGHT ? INGEST_MAX_INFLIGHT : in->fly_cap;
	size_t bytes;
	ring_payload_region(in->ring, &in->region, &bytes);
	for (int i = 0; i < in->fly_cap && !rc; i++)
		rc = kern_event_create(ctx, &in->fly_ev[i]);
	if (!rc && (rc = kern_host_register(ctx, in->region, bytes)) == 0)
		in->ctx = ctx;
	if (rc < 0) {
		snprintf(err, errlen, "ring '%s': cannot register its %zu bytes of slots with the %s device: %s", ring, bytes,
			 kern_ctx_backend_name(ctx), strerror(-rc));
		for (int i = 0; i < in->fly_cap; i++)
			kern_event_destroy(in->fly_ev[i]);
		trainer_ingest_close(in);
		return rc;
	}
	return 0;
}

static int retire(TrainerIngest *in, int wait_all);

void trainer_ingest_close(TrainerIngest *in)
{
	if (in->ctx) {
		retire(in, 1);
		for (int i = 0; i < in->fly_cap; i++)
			kern_event_destroy(in->fly_ev[i]);
		kern_host_unregister(in->ctx, in->region);
		in->ctx = NULL;
	}
	if (in->cons)
		ring_consumer_detach(in->cons);
	if (in->ring)
		ring_close(in->ring);
	in->cons = NULL;
	in->ring = NULL;
}

uint64_t trainer_ingest_position(const TrainerIngest *in)
{
	return ring_consumer_position(in->cons);
}

// the next slot of this rank, waiting in short slices up to timeout_s; a stop request ends the
// wait after a slice without data (with data flowing the batch completes, so a resumed run can
// continue on the same ring)
static int acquire(TrainerIngest *in, RingSlot *slot, double timeout_s, char *err, size_t errlen)
{
	double t0 = now_s();
	for (;;) {
		int rc = ring_consumer_acquire(in->cons, slot, 200);
		double t = now_s();
		if (rc == 0) {
			in->wait_s += t - t0;
			return 0;
		}
		// a ring destroyed while stopping is the job ending around us, not a failure
		if ((rc == -ETIMEDOUT || rc == -ESHUTDOWN) && in->cancel && *in->cancel) {
			in->wait_s += t - t0;
			snprintf(err, errlen, "stop requested while waiting for position %llu of ring '%s'",
				 (unsigned long long)trainer_ingest_position(in), in->name);
			return -ECANCELED;
		}
		if (rc == -ETIMEDOUT && t - t0 < timeout_s)
			continue;
		in->wait_s += t - t0;
		uint64_t g = trainer_ingest_position(in);
		if (rc == -ETIMEDOUT)
			snprintf(err, errlen, "no data on ring '%s' for %.0f s at position %llu (are the loaders running?)", in->name,
				 timeout_s, (unsigned long long)g);
		else if (rc == -ESHUTDOWN)
			snprintf(err, errlen, "ring '%s' was destroyed while waiting for position %llu", in->name,
				 (unsigned long long)g);
		else
			snprintf(err, errlen, "ring '%s': acquiring position %llu failed: %s", in->name, (unsigned long long)g,
				 strerror(-rc));
		return rc;
	}
}

int trainer_ingest_skip_to(TrainerIngest *in, uint64_t pos, double timeout_s, char *err, size_t errlen)
{
	if (trainer_ingest_position(in) > pos) {
		snprintf(err, errlen, "ring '%s' starts at position %llu, past the checkpoint's %llu (recreate it with "
				      "--first-position at most %llu)", in->name, (unsigned long long)trainer_ingest_position(in),
			 (unsigned long long)pos, (unsigned long long)pos);
		return -ERANGE;
	}
	while (trainer_ingest_position(in) < pos) {
		RingSlot s;
		int rc = acquire(in, &s, timeout_s, err, errlen);
		if (rc < 0)
			return rc;
		if ((rc = ring_consumer_release(in->cons, &s)) < 0) {
			snprintf(err, errlen, "ring '%s': releasing position %llu failed: %s", in->name,
				 (unsigned long long)s.position, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

// releases the slots whose copies are done, oldest first; wait_all: waits for the newest copy
// (the device runs copies in order) and releases them all
static int retire(TrainerIngest *in, int wait_all)
{
	if (wait_all && in->fly_n) {
		KEvent *last = in->fly_ev[(in->fly_head + in->fly_n - 1) % in->fly_cap];
		int q = kern_event_query(last);
		if (q < 0 || (q == 0 && (q = kern_event_sync(last)) < 0))
			return q;
	}
	while (in->fly_n) {
		int q = kern_event_query(in->fly_ev[in->fly_head]);
		if (q < 0)
			return q;
		if (!q)
			break;
		int rc = ring_consumer_release(in->cons, &in->fly[in->fly_head]);
		if (rc < 0)
			return rc;
		in->fly_head = (in->fly_head + 1) % in->fly_cap;
		in->fly_n--;
	}
	return 0;
}

// queues slot s's clip and tokens into row b, and keeps the slot in flight until the copy is done
static int upload(TrainerIngest *in, const IngestBatch *b, int row, const RingSlot *s)
{
	const int64_t per = (int64_t)in->clip_bytes, L = in->geom.text_len;
	KTensor cv, tv;
	int rc = kern_view(&cv, b->clips, row * per, 1, &per);
	if (!rc)
		rc = kern_view(&tv, b->text, row * L, 1, &L);
	if (!rc)
		rc = kern_upload_async(in->ctx, &cv, s->payload, (size_t)per);
	if (!rc)
		rc = kern_upload_async(in->ctx, &tv, s->text, sizeof(int32_t) * (size_t)L);
	if (rc < 0)
		return rc;
	if (in->fly_n == in->fly_cap) { // the window is full: the oldest copy must finish first
		KEvent *old = in->fly_ev[in->fly_head];
		int q = kern_event_query(old);
		if (q < 0 || (q == 0 && (q = kern_event_sync(old)) < 0) || (rc = retire(in, 0)) < 0)
			return q < 0 ? q : rc;
	}
	int at = (in->fly_head + in->fly_n) % in->fly_cap;
	in->fly[at] = *s;
	in->fly_n++;
	if ((rc = kern_event_record(in->fly_ev[at], in->ctx)) < 0)
		return rc;
	return retire(in, 0);
}

static int check_slot(TrainerIngest *in, const RingSlot *s, int64_t dataset_size, char *err, size_t errlen)
{
	if (dataset_size > 0 && s->sample_id >= (uint64_t)dataset_size) {
		snprintf(err, errlen, "position %llu carries sample id %llu, not below --dataset-size %lld",
			 (unsigned long long)s->position, (unsigned long long)s->sample_id, (long long)dataset_size);
		return -ERANGE;
	}
	for (uint32_t i = 0; i < in->geom.text_len; i++)
		if (s->text[i] < 0 || s->text[i] >= in->vocab) {
			snprintf(err, errlen, "position %llu: token id %d outside the vocabulary [0, %d) (--vocab)",
				 (unsigned long long)s->position, (int)s->text[i], in->vocab);
			return -ERANGE;
		}
	return 0;
}

int trainer_ingest_batch(TrainerIngest *in, const IngestBatch *b, int64_t dataset_size, double timeout_s, char *err,
			 size_t errlen)
{
	const int B = (int)b->clips->shape[0];
	for (int row = 0; row < B;) {
		RingSlot s;
		int rc = acquire(in, &s, timeout_s, err, errlen);
		if (rc < 0)
			return rc;
		if (s.flags & RING_SLOT_ERROR) {
			in->errors++;
		} else if ((rc = check_slot(in, &s, dataset_size, err, errlen)) == 0) {
			b->ids[row] = (int64_t)s.sample_id;
			b->pos[row] = (int64_t)s.position;
			if ((rc = upload(in, b, row, &s)) < 0) {
				snprintf(err, errlen, "position %llu: copying it to the device failed: %s",
					 (unsigned long long)s.position, strerror(-rc));
				return rc;
			}
			row++;
			continue; // released once its copy is done
		}
		int rr = ring_consumer_release(in->cons, &s);
		if (rc < 0)
			return rc;
		if (rr < 0) {
			snprintf(err, errlen, "ring '%s': releasing position %llu failed: %s", in->name,
				 (unsigned long long)s.position, strerror(-rr));
			return rr;
		}
	}
	int rc = retire(in, 1);
	if (rc < 0)
		snprintf(err, errlen, "ring '%s': finishing the batch's copies failed: %s", in->name, strerror(-rc));
	return rc;
}
