// Trainer checkpoint contents as ckpt_io extra tensors: trainer.positions (ranks) u64 stored as I64,
// the global τ's Adam state trainer.temp_mv f32 (2) + trainer.temp_steps i64, and the FastCLIP
// table fastclip.table f32 (dataset size x width), classify's heads cls.params / cls.adam_m / cls.adam_v
// f32 + cls.step i64 (and the heads' class counts as avclip.cls_heads "K0,K1"); log s itself is the model's
// logit_scale parameter.
#include "trainer_ckpt.h" // defines: trainer_ckpt_save, trainer_ckpt_load

#include <errno.h>  // defines: EINVAL, ENOENT, EBADMSG, ENOMEM, errno
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: memset, memcpy, strchr, strerror

#include "trainer_mae.h" // defines: train_mae_ckpt_meta
#include "model.h" // defines: ckpt_save, ckpt_load_latest, CkptTarget, CkptState, CKPT_MARKER, st_open, st_find, st_close

enum { MAX_EXTRA = 8 };

// the device state the checkpoint holds besides the model and optimizer, in host copies
typedef struct {
	float temp_mv[2];
	int64_t temp_steps;
	float *table; // (n, width) or NULL
	float *cls;   // classify: the heads' parameters, AdamW m and v, (3, n) or NULL
	int64_t cls_step;
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

static int extras(Extras *e, TrainStep *ts, uint64_t *positions, int ranks)
{
	memset(e, 0, sizeof *e);
	add(e, "trainer.positions", ST_I64, positions, ranks); // u64 values: safetensors readers lack U64
	add(e, "trainer.temp_mv", ST_F32, e->temp_mv, 2);
	add(e, "trainer.temp_steps", ST_I64, &e->temp_steps, 1);
	if (ts->cls) {
		const int64_t n = ts->cls->n_params;
		if (!(e->cls = malloc(3 * sizeof(float) * (size_t)n)))
			return -ENOMEM;
		add(e, "cls.params", ST_F32, e->cls, n);
		add(e, "cls.adam_m", ST_F32, e->cls + n, n);
		add(e, "cls.adam_v", ST_F32, e->cls + 2 * n, n);
		add(e, "cls.step", ST_I64, &e->cls_step, 1);
	}
	const KTensor *tab = (ts->xchg ? fastclip_exchange_table(ts->xchg) : NULL);
	if (!tab)
		return 0;
	if (!(e->table = malloc(kern_nbytes(tab))))
		return -ENOMEM;
	add(e, "fastclip.table", ST_F32, e->table, kern_numel(tab));
	return 0;
}

// the heads' state between the device and e->cls (down: 1 for a save)
static int cls_state(TrainStep *ts, Extras *e, int down)
{
	ClsHeads *h = ts->cls;
	if (!h)
		return 0;
	KTensor *t[3] = {&h->params, &h->opt->m, &h->opt->v};
	const size_t nb = sizeof(float) * (size_t)h->n_params;
	for (int i = 0; i < 3; i++) {
		int rc = down ? kern_download(ts->ctx, e->cls + i * h->n_params, nb, t[i])
			      : kern_upload(ts->ctx, t[i], e->cls + i * h->n_params, nb);
		if (rc)
			return rc;
	}
	if (down)
		e->cls_step = h->opt->step;
	else
		h->opt->step = e->cls_step;
	return 0;
}

static CkptTarget target(TrainStep *ts, Extras *e)
{
	const ParamSpec *specs = ts->mae ? ts->mae->specs : ts->model->specs;
	const int n = ts->mae ? ts->mae->n_specs : ts->model->n_specs;
	return (CkptTarget){.ctx = ts->ctx,
			    .cfg = &ts->cfg.model,
			    .specs = specs,
			    .n_specs = n,
			    .params = ts->mae ? &ts->mae->params : &ts->model->params,
			    .opt = ts->opt,
			    .extra = e->extra,
			    .n_extra = e->n};
}

int trainer_ckpt_save(const char *dir, TrainStep *ts, int64_t step, const uint64_t *positions, int ranks,
		      uint64_t data_seed, int keep_last, char *err, size_t errlen)
{
	Extras e;
	int rc = extras(&e, ts, (uint64_t *)positions, ranks);
	KTensor *tab = (ts->xchg ? fastclip_exchange_table(ts->xchg) : NULL);
	if (!rc)
		rc = kern_download(ts->ctx, e.temp_mv, sizeof e.temp_mv, &ts->temp_mv);
	if (!rc && tab)
		rc = kern_download(ts->ctx, e.table, kern_nbytes(tab), tab);
	if (!rc)
		rc = cls_state(ts, &e, 1);
	if (rc) {
		snprintf(err, errlen, "checkpoint: cannot gather the trainer's state: %s", strerror(-rc));
		free(e.table);
		free(e.cls);
		return rc;
	}
	e.temp_steps = ts->temp_steps;
	CkptTarget t = target(ts, &e);
	// what a resume and tools/eval check against: the vocabulary, the batch, the LR schedule
	char batch[16], sched[96];
	const OptConfig *oc = &ts->opt->cfg;
	snprintf(batch, sizeof batch, "%d", ts->cfg.batch);
	snprintf(sched, sizeof sched, "%lld %lld %lld %lld %.17g", (long long)oc->total_steps,
		 (long long)oc->warmup_steps, (long long)oc->join_step, (long long)oc->join_len, oc->join_lr);
	const char *meta[16] = {"avclip.batch", batch, "avclip.schedule", sched};
	char mae[96];
	int nm = 2 + train_mae_ckpt_meta(ts, meta + 4, mae, sizeof mae);
	if (ts->cfg.vocab && ts->cfg.vocab[0]) {
		meta[2 * nm] = "avclip.vocab", meta[2 * nm + 1] = ts->cfg.vocab, nm++;
		meta[2 * nm] = "avclip.merges", meta[2 * nm + 1] = ts->cfg.vocab_merges ? ts->cfg.vocab_merges : "",
			 nm++;
	}
	if (ts->cfg.data_id && ts->cfg.data_id[0]) {
		meta[2 * nm] = "avclip.data", meta[2 * nm + 1] = ts->cfg.data_id, nm++;
		meta[2 * nm] = "avclip.data_name", meta[2 * nm + 1] = ts->cfg.data_name ? ts->cfg.data_name : "", nm++;
	}
	char heads[64] = ""; // classify: each head's class count, which tools/eval reads the heads by
	for (int k = 0; ts->cls && k < ts->cls->cfg.n_heads; k++)
		snprintf(heads + strlen(heads), sizeof heads - strlen(heads), "%s%d", k ? "," : "",
			 ts->cls->cfg.classes[k]);
	if (heads[0])
		meta[2 * nm] = "avclip.cls_heads", meta[2 * nm + 1] = heads, nm++;
	t.meta = meta;
	t.n_meta = nm;
	CkptState st = {.step = step, .stream_pos = positions[0], .rng = {data_seed, 0, 0, 0}};
	rc = ckpt_save(dir, &t, &st, keep_last, err, errlen);
	free(e.table);
	free(e.cls);
	return rc;
}

int trainer_ckpt_load(const char *dir, TrainStep *ts, int64_t *step, uint64_t *positions, int ranks, uint64_t data_seed,
		      char *err, size_t errlen)
{
	Extras e;
	int rc = extras(&e, ts, positions, ranks);
	if (rc) {
		free(e.cls);
		return rc;
	}
	CkptTarget t = target(ts, &e);
	if (ts->cfg.fresh_table && e.table) // the last extra: the old dataset's per-sample estimators stay behind
		t.n_extra--;
	CkptState st;
	rc = ckpt_load_latest(dir, &t, &st, err, errlen);
	if (rc == 0 && st.rng[0] != data_seed) {
		snprintf(err, errlen,
			 "%s: the checkpoint was trained on a stream with seed %llu, the ring's seed is %llu", dir,
			 (unsigned long long)st.rng[0], (unsigned long long)data_seed);
		rc = -EINVAL;
	}
	KTensor *tab = (ts->xchg ? fastclip_exchange_table(ts->xchg) : NULL);
	if (rc == 0)
		rc = kern_upload(ts->ctx, &ts->temp_mv, e.temp_mv, sizeof e.temp_mv);
	if (rc == 0 && tab && !ts->cfg.fresh_table)
		rc = kern_upload(ts->ctx, tab, e.table, kern_nbytes(tab));
	if (rc == 0)
		rc = cls_state(ts, &e, 0);
	if (rc == 0) {
		ts->temp_steps = e.temp_steps;
		*step = st.step;
		rc = train_step_after_load(ts);
	}
	free(e.table);
	free(e.cls);
	return rc;
}

int trainer_ckpt_first_position(const char *dir, int64_t *step, int *ranks, uint64_t *first, char *err, size_t errlen)
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
	if (!pos || (pos->dtype != ST_I64 && pos->dtype != ST_U64) || pos->nbytes < 8 || !st || st->dtype != ST_I64 ||
	    st->nbytes != 8) {
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
