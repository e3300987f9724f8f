// Ring consumer side of the trainer: each slot's clip and tokens are copied to the device on a copy
// stream, from the registered ring mapping (or a pinned staging copy of it); a slot is released as
// soon as an event after its copy completes (at once on the CPU backend), so a rank holds few slots
// and never starves a ring, and the next batch's copies run while the current step computes.
#include "trainer_ingest.h" // defines: TrainerIngest, ...
#include "proc_time.h"      // defines: time_mono_s

#include <errno.h>  // defines: ENOENT, EINVAL, ERANGE, ETIMEDOUT, ESHUTDOWN, ECANCELED
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: memcpy, memset, strerror
#include <time.h>   // defines: clock_gettime

#include "stream.h" // defines: stream_node_position

static int check_ring(TrainerIngest *in, const char *ring, int ranks, const ModelConfig *m, char *err, size_t errlen)
{
	RingInfo info;
	ring_info(in->ring, &info);
	RingGeometry want = {.frames = (uint32_t)m->frames,
			     .height = (uint32_t)m->image_size,
			     .width = (uint32_t)m->image_size,
			     .channels = 3,
			     .text_len = (uint32_t)m->ctx_len};
	if (!ring_geometry_equal(&info.geometry, &want)) {
		char have[96], need[96];
		ring_geometry_format(&info.geometry, have, sizeof have);
		ring_geometry_format(&want, need, sizeof need);
		snprintf(err, errlen,
			 "ring '%s' carries clips of %s but the model wants %s (--frames, --image-size, --ctx-len)",
			 ring, have, need);
		return -EINVAL;
	}
	if ((int)info.ranks != ranks) {
		snprintf(err, errlen, "ring '%s' serves %u ranks but this run has --ranks %d", ring, info.ranks, ranks);
		return -EINVAL;
	}
	in->geom = info.geometry;
	in->seed = info.seed;
	in->ring_ranks = info.ranks;
	in->nodes = 1;
	in->vocab = m->vocab;
	in->clip_bytes = (size_t)ring_payload_bytes(&info.geometry);
	// a consumer holding S/N slots blocks itself: stay below
	in->fly_cap = (int)(info.slots / info.ranks) - 1;
	in->fly_cap = in->fly_cap < 1 ? 1 : in->fly_cap > INGEST_MAX_INFLIGHT ? INGEST_MAX_INFLIGHT : in->fly_cap;
	return 0;
}

// the copy stream, the events and the registration of the ring's payloads (staging when refused)
static int setup_device(TrainerIngest *in, KernCtx *ctx, int flags, char *err, size_t errlen)
{
	int rc = kern_stream_create(ctx, &in->copy);
	for (int i = 0; i < in->fly_cap && !rc; i++)
		rc = kern_event_create(ctx, &in->fly_ev[i]);
	if (rc < 0) {
		snprintf(err, errlen, "ring '%s': cannot make a copy stream and %d events on the %s device: %s",
			 in->name, in->fly_cap, kern_ctx_backend_name(ctx), strerror(-rc));
		return rc;
	}
	in->ctx = ctx;
	const size_t lab_bytes = sizeof(int32_t) * RING_LABELS * (size_t)in->fly_cap;
	if ((rc = kern_host_alloc(ctx, (void **)&in->fly_labels, lab_bytes)) < 0) {
		in->fly_labels = NULL;
		snprintf(err, errlen, "ring '%s': cannot allocate %zu bytes of pinned memory for the labels: %s",
			 in->name, lab_bytes, strerror(-rc));
		return rc;
	}
	size_t bytes;
	void *region;
	ring_payload_region(in->ring, &region, &bytes);
	rc = flags & INGEST_STAGING ? -ECANCELED : kern_host_register(ctx, region, bytes);
	if (rc == 0) {
		in->region = region;
		return 0;
	}
	// 4 KiB apart so every staged clip starts as aligned as a ring payload does
	in->stage_stride = (in->clip_bytes + sizeof(int32_t) * in->geom.text_len + 4095) & ~(size_t)4095;
	const size_t stage = in->stage_stride * (size_t)in->fly_cap;
	int st = kern_host_alloc(ctx, (void **)&in->stage, stage);
	if (st < 0) {
		in->stage = NULL;
		snprintf(err, errlen,
			 "ring '%s': the %s device refused to register its %zu bytes of slots (%s) and a pinned "
			 "staging buffer of %zu bytes could not be allocated: %s",
			 in->name, kern_ctx_backend_name(ctx), bytes, strerror(-rc), stage, strerror(-st));
		return st;
	}
	snprintf(in->note, sizeof in->note,
		 "ring '%s': %s; copies go through a pinned staging buffer of %.1f MiB (one "
		 "more host copy per clip)",
		 in->name, rc == -ECANCELED ? "staging asked for" : "the device refused to register the ring mapping",
		 stage / 1048576.0);
	if (rc != -ECANCELED)
		snprintf(in->note + strlen(in->note), sizeof in->note - strlen(in->note), " [%s]", strerror(-rc));
	return 0;
}

int trainer_ingest_open(TrainerIngest *in, KernCtx *ctx, const char *ring, int rank, int ranks, const ModelConfig *m,
			int flags, char *err, size_t errlen)
{
	memset(in, 0, sizeof(*in));
	in->event_query = kern_event_query;
	snprintf(in->name, sizeof in->name, "%s", ring);
	char why[256] = "";
	int rc = ring_open(&in->ring, ring, NULL, why, sizeof why);
	if (rc < 0) {
		if (rc == -ENOENT)
			snprintf(err, errlen,
				 "ring '%s' does not exist (create it with tools/ringctl create or tools/launch.sh)",
				 ring);
		else
			snprintf(err, errlen, "cannot open ring '%s': %s", ring, why[0] ? why : strerror(-rc));
		in->ring = NULL;
		return rc;
	}
	if ((rc = check_ring(in, ring, ranks, m, err, errlen)) == 0 &&
	    (rc = ring_consumer_attach(in->ring, (uint32_t)rank, &in->cons)) < 0) {
		in->cons = NULL;
		if (rc == -EBUSY)
			snprintf(err, errlen, "rank %d of ring '%s' is held by another live trainer", rank, ring);
		else if (rc == -EPROTO)
			snprintf(err, errlen,
				 "ring '%s' is damaged: rank %d's stream position cannot occur; recreate it", ring,
				 rank);
		else
			snprintf(err, errlen, "cannot attach to ring '%s' as rank %d: %s", ring, rank, strerror(-rc));
	}
	if (!rc)
		rc = setup_device(in, ctx, flags, err, errlen);
	if (rc < 0)
		trainer_ingest_close(in);
	return rc;
}

static int retire(TrainerIngest *in, int wait_all);

void trainer_ingest_close(TrainerIngest *in)
{
	if (in->ctx) {
		if (retire(in, 1) < 0) // the device failed: nothing more is copied, let the slots go
			for (; in->fly_n; in->fly_n--, in->fly_head = (in->fly_head + 1) % in->fly_cap)
				if (in->held[in->fly_head])
					ring_consumer_release(in->cons, &in->fly[in->fly_head]);
		if (in->region)
			kern_host_unregister(in->ctx, in->region);
		if (in->stage)
			kern_host_free(in->ctx, in->stage);
		if (in->fly_labels)
			kern_host_free(in->ctx, in->fly_labels);
	}
	for (int i = 0; i < in->fly_cap; i++)
		kern_event_destroy(in->fly_ev[i]);
	if (in->copy)
		kern_ctx_destroy(in->copy);
	if (in->cons)
		ring_consumer_detach(in->cons);
	if (in->ring)
		ring_close(in->ring);
	memset(in->fly_ev, 0, sizeof in->fly_ev);
	in->ctx = in->copy = NULL;
	in->region = in->stage = NULL;
	in->fly_labels = NULL;
	in->cons = NULL;
	in->ring = NULL;
}

uint64_t trainer_ingest_position(const TrainerIngest *in)
{
	return ring_consumer_position(in->cons);
}

// the next slot of this rank, waiting in short slices up to timeout_s (releasing finished copies
// between slices); a stop request ends the wait after a slice without data (with data flowing the
// batch completes, so a resumed run can continue on the same ring)
static int acquire(TrainerIngest *in, RingSlot *slot, double timeout_s, char *err, size_t errlen)
{
	double t0 = time_mono_s();
	for (;;) {
		int rc = ring_consumer_acquire(in->cons, slot, 200);
		double t = time_mono_s();
		if (rc == 0) {
			in->wait_s += t - t0;
			return 0;
		}
		if (rc == -ETIMEDOUT && (rc = retire(in, 0)) < 0) {
			snprintf(err, errlen, "ring '%s': a copy to the device failed: %s", in->name, strerror(-rc));
			return rc;
		}
		rc = rc ? rc : -ETIMEDOUT;
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
			snprintf(err, errlen,
				 "no data on ring '%s' for %.0f s at position %llu (are the loaders running?)",
				 in->name, timeout_s, (unsigned long long)g);
		else if (rc == -EPROTO)
			snprintf(
				err, errlen,
				"ring '%s' is damaged: its slots hold positions no sound ring can have (at position %llu); "
				"recreate it",
				in->name, (unsigned long long)g);
		else if (rc == -ESHUTDOWN)
			snprintf(err, errlen, "ring '%s' was destroyed while waiting for position %llu", in->name,
				 (unsigned long long)g);
		else
			snprintf(err, errlen, "ring '%s': acquiring position %llu failed: %s", in->name,
				 (unsigned long long)g, strerror(-rc));
		return rc;
	}
}

int trainer_ingest_skip_to(TrainerIngest *in, uint64_t pos, double timeout_s, char *err, size_t errlen)
{
	if (trainer_ingest_position(in) > pos) {
		snprintf(err, errlen,
			 "ring '%s' starts at position %llu, past the checkpoint's %llu (recreate it with "
			 "--first-position at most %llu)",
			 in->name, (unsigned long long)trainer_ingest_position(in), (unsigned long long)pos,
			 (unsigned long long)pos);
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

// the oldest in-flight copy is done: its slot (if still held) goes back to the ring
static int release_head(TrainerIngest *in)
{
	int h = in->fly_head, rc = 0;
	if (in->held[h])
		rc = ring_consumer_release(in->cons, &in->fly[h]);
	in->held[h] = 0;
	in->fly_head = (h + 1) % in->fly_cap;
	in->fly_n--;
	return rc;
}

// releases the slots whose copies are done, oldest first (the copy stream runs them in order);
// wait_all: the host waits for the newest copy first, so all go
static int retire(TrainerIngest *in, int wait_all)
{
	if (wait_all && in->fly_n) {
		int rc = kern_event_sync(in->fly_ev[(in->fly_head + in->fly_n - 1) % in->fly_cap]);
		if (rc < 0)
			return rc;
		while (in->fly_n)
			if ((rc = release_head(in)) < 0)
				return rc;
		return 0;
	}
	while (in->fly_n) {
		int q = in->event_query(in->fly_ev[in->fly_head]);
		if (q < 0)
			return q;
		if (!q)
			break;
		if ((q = release_head(in)) < 0)
			return q;
	}
	return 0;
}

void trainer_ingest_set_classes(TrainerIngest *in, int n_heads, const int *n_classes)
{
	for (int k = 0; k < RING_LABELS; k++)
		in->n_classes[k] = k < n_heads ? n_classes[k] : -1; // -1: the head is not there
}

void trainer_ingest_set_node(TrainerIngest *in, int node, int nodes)
{
	in->node = (uint32_t)node;
	in->nodes = nodes > 1 ? (uint32_t)nodes : 1;
}

int trainer_ingest_poll(TrainerIngest *in)
{
	int rc = retire(in, 0);
	return rc < 0 ? rc : in->fly_n;
}

// a free in-flight entry: when the window is full the host waits for the oldest copy
static int make_room(TrainerIngest *in)
{
	int rc = retire(in, 0);
	if (rc < 0 || in->fly_n < in->fly_cap)
		return rc;
	if ((rc = kern_event_sync(in->fly_ev[in->fly_head])) < 0)
		return rc;
	return release_head(in);
}

// queues slot s's clip and tokens into row b on the copy stream; the slot stays held until the copy
// is done, or (staging) goes back at once after its bytes are copied into the staging entry
static int upload(TrainerIngest *in, const IngestBatch *b, int row, const RingSlot *s)
{
	const int64_t per = (int64_t)in->clip_bytes, L = in->geom.text_len, NL = RING_LABELS;
	KTensor cv, tv, lv;
	int rc = kern_view(&cv, b->clips, row * per, 1, &per);
	if (!rc)
		rc = kern_view(&tv, b->text, row * L, 1, &L);
	if (!rc && b->label_ids)
		rc = kern_view(&lv, b->label_ids, row * NL, 1, &NL);
	if (!rc)
		rc = make_room(in);
	if (rc < 0)
		return rc;
	int at = (in->fly_head + in->fly_n) % in->fly_cap;
	const void *clip = s->payload, *text = s->text;
	if (in->stage) {
		uint8_t *e = in->stage + in->stage_stride * (size_t)at;
		memcpy(e, s->payload, in->clip_bytes);
		memcpy(e + in->clip_bytes, s->text, sizeof(int32_t) * (size_t)L);
		clip = e;
		text = e + in->clip_bytes;
	}
	if (!rc)
		rc = kern_upload_async(in->copy, &cv, clip, (size_t)per);
	if (!rc)
		rc = kern_upload_async(in->copy, &tv, text, sizeof(int32_t) * (size_t)L);
	// the labels from this entry's pinned row, untouched until the entry's event completes
	int32_t *lab = in->fly_labels + (size_t)at * RING_LABELS;
	memcpy(lab, s->labels, sizeof s->labels);
	if (!rc && b->label_ids)
		rc = kern_upload_async(in->copy, &lv, lab, sizeof s->labels);
	if (!rc)
		rc = kern_event_record(in->fly_ev[at], in->copy);
	if (rc < 0)
		return rc;
	in->fly[at] = *s;
	in->held[at] = !in->stage;
	in->fly_n++;
	if (in->stage && (rc = ring_consumer_release(in->cons, &in->fly[at])) < 0)
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
	for (int k = 0; k < RING_LABELS; k++) {
		const int32_t v = s->labels[k], n = in->n_classes[k];
		if (v != RING_NO_LABEL && (v < 0 || (n && v >= n))) {
			snprintf(err, errlen, "position %llu (sample %llu): label %d of head %d outside its %d classes",
				 (unsigned long long)s->position, (unsigned long long)s->sample_id, (int)v, k,
				 n > 0 ? n : 0);
			return -ERANGE;
		}
	}
	for (uint32_t i = 0; i < in->geom.text_len; i++)
		if (s->text[i] < 0 || s->text[i] >= in->vocab) {
			snprintf(err, errlen, "position %llu: token id %d outside the vocabulary [0, %d) (--vocab)",
				 (unsigned long long)s->position, (int)s->text[i], in->vocab);
			return -ERANGE;
		}
	return 0;
}

// the end of a batch: an event the compute stream waits for, or the host waits itself
static int finish(TrainerIngest *in, const IngestBatch *b, char *err, size_t errlen)
{
	int rc = b->ready ? kern_event_record(b->ready, in->copy) : retire(in, 1);
	if (rc < 0)
		snprintf(err, errlen, "ring '%s': finishing the batch's copies failed: %s", in->name, strerror(-rc));
	return rc;
}

int trainer_ingest_batch(TrainerIngest *in, const IngestBatch *b, int64_t dataset_size, double timeout_s, char *err,
			 size_t errlen)
{
	if (b->batch < 1 || b->batch > INT32_MAX || b->clips->ndim < 1 || b->clips->shape[0] != b->batch ||
	    b->text->ndim < 1 || b->text->shape[0] != b->batch ||
	    (b->label_ids && (b->label_ids->ndim < 1 || b->label_ids->shape[0] != b->batch))) {
		snprintf(err, errlen, "ring '%s': a batch of %lld samples into buffers of %lld clips and %lld texts",
			 in->name, (long long)b->batch, (long long)(b->clips->ndim ? b->clips->shape[0] : 0),
			 (long long)(b->text->ndim ? b->text->shape[0] : 0));
		return -EINVAL;
	}
	const int B = (int)b->batch;
	int rc = b->free_ev ? kern_stream_wait_event(in->copy, b->free_ev) : 0;
	if (rc < 0) {
		snprintf(err, errlen, "ring '%s': ordering the copies after the last step failed: %s", in->name,
			 strerror(-rc));
		return rc;
	}
	for (int row = 0; row < B;) {
		RingSlot s;
		if ((rc = acquire(in, &s, timeout_s, err, errlen)) < 0)
			return rc;
		if (s.flags & RING_SLOT_ERROR) {
			in->errors++;
			in->last_error = s.error;
			if (++in->error_run >= in->max_error_run && in->max_error_run) {
				snprintf(
					err, errlen,
					"ring '%s': the last %llu positions (up to %llu) all failed in the loaders, the last "
					"with loader error %d: the data is no longer readable (the dataset deleted, moved or "
					"unmounted under the job?); the loader logs name each file (RUN_DIR/logs/loaderd-*.log); "
					"--max-error-run sets how many failures in a row stop the run",
					in->name, (unsigned long long)in->error_run, (unsigned long long)s.position,
					(int)s.error);
				rc = -EIO;
			}
		} else if ((rc = check_slot(in, &s, dataset_size, err, errlen)) == 0) {
			in->error_run = 0;
			b->ids[row] = (int64_t)s.sample_id;
			b->pos[row] = (int64_t)stream_node_position(s.position, in->ring_ranks, in->node, in->nodes);
			if (b->labels)
				memcpy(b->labels + (size_t)row * RING_LABELS, s.labels, sizeof s.labels);
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
	return finish(in, b, err, errlen);
}
