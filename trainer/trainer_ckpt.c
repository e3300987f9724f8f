// Trainer checkpoint contents as ckpt_io extra tensors: trainer.positions (ranks) u64 stored as I64,
// trainer.temp [log s, m, v] f64 + trainer.temp_steps i64, fastclip.<table> f32 (dataset size).
#include "trainer_ckpt.h" // defines: trainer_ckpt_save, trainer_ckpt_load

#include <errno.h>  // defines: EINVAL, ENOENT, EBADMSG, errno
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: memset, memcpy, strchr, strerror

#include "ckpt_io.h" // defines: ckpt_save, ckpt_load_latest, CkptTarget, CkptState, CKPT_MARKER
#include "st_file.h" // defines: st_open, st_find, st_close

enum { MAX_EXTRA = 16 };

typedef struct {
	double temp[3];
	int64_t temp_steps;
	StTensor extra[MAX_EXTRA];
	int n;
} Extras;

static void add(Extras *e, const char *name, StDtype dt, void *data, int64_t n)
{
	StTensor *t = &e->extra[e->n++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof t->name, "%s", name);
	t->dtype = dt;
	t->ndim = 1;
	t->shape[0] = n;
	t->data = data;
	t->nbytes = (size_t)n * st_dtype_size(dt);
}

static void extras(Extras *e, TrainStep *ts, uint64_t *positions, int ranks)
{
	e->n = 0;
	add(e, "trainer.positions", ST_I64, positions, ranks); // u64 values: safetensors readers lack U64
	add(e, "trainer.temp", ST_F64, e->temp, 3);
	add(e, "trainer.temp_steps", ST_I64, &e->temp_steps, 1);
	if (!ts->has_tables)
		return;
	FastclipTables *t = &ts->tables;
	const char *names[] = { "u1", "u2", "tau1", "tau2", "bound1", "bound2", "m1", "m2", "v1", "v2" };
	float *tabs[] = { t->u1, t->u2, t->tau1, t->tau2, t->bound1, t->bound2, t->m1, t->m2, t->v1, t->v2 };
	for (int i = 0; i < 10; i++)
		if (tabs[i]) {
			char n[64];
			snprintf(n, sizeof n, "fastclip.%s", names[i]);
			add(e, n, ST_F32, tabs[i], t->n);
		}
}

static CkptTarget target(TrainStep *ts, Extras *e)
{
	ClipModel *m = ts->model;
	return (CkptTarget){ .ctx = ts->ctx, .cfg = &ts->cfg.model, .specs = m->specs, .n_specs = m->n_specs,
			     .params = &m->params, .opt = ts->opt, .extra = e->extra, .n_extra = e->n };
}

int trainer_ckpt_save(const char *dir, TrainStep *ts, int64_t step, const uint64_t *positions, int ranks,
		      uint64_t data_seed, int keep_last, char *err, size_t errlen)
{
	Extras e;
	e.temp[0] = ts->temp.log_s;
	e.temp[1] = ts->temp.m;
	e.temp[2] = ts->temp.v;
	e.temp_steps = ts->temp.steps;
	extras(&e, ts, (uint64_t *)positions, ranks);
	CkptTarget t = target(ts, &e);
	CkptState st = { .step = step, .stream_pos = positions[0], .rng = { data_seed, 0, 0, 0 } };
	return ckpt_save(dir, &t, &st, keep_last, err, errlen);
}

int trainer_ckpt_load(const char *dir, TrainStep *ts, int64_t *step, uint64_t *positions, int ranks,
		      uint64_t data_seed, char *err, size_t errlen)
{
	Extras e;
	memset(&e, 0, sizeof e);
	extras(&e, ts, positions, ranks);
	CkptTarget t = target(ts, &e);
	CkptState st;
	int rc = ckpt_load_latest(dir, &t, &st, err, errlen);
	if (rc < 0)
		return rc;
	if (st.rng[0] != data_seed) {
		snprintf(err, errlen, "%s: the checkpoint was trained on a stream with seed %llu, the ring's seed is %llu", dir,
			 (unsigned long long)st.rng[0], (unsigned long long)data_seed);
		return -EINVAL;
	}
	ts->temp.log_s = e.temp[0];
	ts->temp.m = e.temp[1];
	ts->temp.v = e.temp[2];
	ts->temp.steps = e.temp_steps;
	*step = st.step;
	return train_step_sync_log_s(ts);
}

int trainer_ckpt_first_position(const char *dir, int64_t *step, int *ranks, uint64_t *first, char *err,
				size_t errlen)
{
	char path[4400];
	int lrc = ckpt_latest_path(dir, path, sizeof path, err, errlen);
	if (lrc < 0)
		return lrc;
	StFile *f;
	int rc = st_open(&f, path);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path, rc == -EBADMSG ? "not a valid checkpoint file" : strerror(-rc));
		return rc;
	}
	const StTensor *pos = st_find(f, "extra/trainer.positions"), *st = st_find(f, "state.step");
	if (!pos || (pos->dtype != ST_I64 && pos->dtype != ST_U64) || pos->nbytes < 8 || !st || st->dtype != ST_I64 || st->nbytes != 8) {
		snprintf(err, errlen, "%s: not a trainer checkpoint (no positions or step)", path);
		st_close(f);
		return -EBADMSG;
	}
	uint64_t lo = UINT64_MAX, v;
	for (size_t i = 0; i < pos->nbytes / 8; i++) {
		memcpy(&v, (const char *)pos->data + 8 * i, 8);
		lo = v < lo ? v : lo;
	}
	memcpy(step, st->data, 8);
	*ranks = (int)(pos->nbytes / 8);
	*first = lo;
	st_close(f);
	return 0;
}
