// Checkpoint writing and loading. Durability order: data file fsynced and renamed into place,
// directory fsynced, then the marker replaced the same way; a crash at any point leaves the
// marker naming a complete file. Bit-identical resume needs only exact bytes: every state is
// stored raw (f32 weights and moments, integer step and RNG).
#include "model.h"  // defines: ckpt_save, ckpt_load_latest, st_open_err, model_params_check_finite
#include "fs_dir.h" // defines: fs_create_new, fs_fopen_read, fs_strerror

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// 2: the trainer's FastCLIP table and τ state are device tensors (fastclip.table, trainer.temp_mv)
#define CKPT_VERSION "2"

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) ? -errno : 0;
	close(fd);
	return rc;
}

// writes via tmp: either path holds the complete new content or is untouched
static int write_atomic(const char *dir, const char *name, const StTensor *t, int n, const char *const *meta,
			int n_meta, const void *raw, size_t raw_len, char *err, size_t errlen)
{
	char tmp[4096], dst[4096];
	snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
	snprintf(dst, sizeof dst, "%s/%s", dir, name);
	int fd = fs_create_new(tmp, 0644); // never through a link planted at the temporary's name
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s (previous checkpoint kept)", tmp, strerror(-fd));
		return fd;
	}
	int rc = raw ? 0 : st_write_fd(fd, t, n, meta, n_meta);
	if (raw) {
		ssize_t k = write(fd, raw, raw_len);
		rc = k == (ssize_t)raw_len ? 0 : (k < 0 ? -errno : -ENOSPC);
	}
	const char *what = "write";
	if (!rc && fsync(fd)) {
		rc = -errno;
		what = "fsync";
	}
	if (close(fd) && !rc) {
		rc = -errno;
		what = "close";
	}
	if (!rc && rename(tmp, dst)) {
		rc = -errno;
		what = "rename";
	}
	if (rc) {
		snprintf(err, errlen, "checkpoint %s of %s failed: %s (previous checkpoint kept)", what, tmp,
			 strerror(-rc));
		unlink(tmp);
		return rc;
	}
	rc = fsync_dir(dir);
	if (rc)
		snprintf(err, errlen, "fsync of directory %s failed: %s", dir, strerror(-rc));
	return rc;
}

static int64_t ckpt_step_of(const char *name)
{
	long long s;
	char tail[32];
	if (sscanf(name, "ckpt-%lld.%31s", &s, tail) == 2 && !strcmp(tail, "safetensors"))
		return s;
	return -1;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

// removes checkpoints older than the keep_last newest; failures here lose nothing
static void prune(const char *dir, int keep_last)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	int64_t steps[4096];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 4096) {
		int64_t s = ckpt_step_of(e->d_name);
		if (s >= 0)
			steps[n++] = s;
	}
	closedir(d);
	qsort(steps, (size_t)n, sizeof steps[0], cmp_i64);
	for (int i = 0; i + keep_last < n; i++) {
		char p[4096];
		snprintf(p, sizeof p, "%s/ckpt-%08lld.safetensors", dir, (long long)steps[i]);
		unlink(p);
	}
}

static StTensor vec(const char *name, StDtype dt, const void *data, int64_t n)
{
	StTensor t = {.dtype = dt, .ndim = 1, .shape = {n}, .data = data, .nbytes = (size_t)n * st_dtype_size(dt)};
	snprintf(t.name, sizeof t.name, "%s", name);
	return t;
}

int ckpt_save(const char *dir, const CkptTarget *t, const CkptState *st, int keep_last, char *err, size_t errlen)
{
	int64_t np = kern_numel(t->params);
	size_t bytes = sizeof(float) * (size_t)np;
	int nt = 4 + t->n_extra + (t->opt ? 3 : 0);
	float *host = malloc(bytes * (t->opt ? 3 : 1));
	StTensor *ts = calloc((size_t)nt, sizeof *ts);
	int rc = (!host || !ts) ? -ENOMEM : 0;
	if (!rc && t->params->dtype != KDT_F32)
		rc = -EINVAL;
	if (!rc)
		rc = kern_download(t->ctx, host, bytes, t->params);
	if (!rc && t->opt) {
		rc = kern_download(t->ctx, host + np, bytes, &t->opt->m);
		if (!rc)
			rc = kern_download(t->ctx, host + 2 * np, bytes, &t->opt->v);
	}
	if (rc) {
		snprintf(err, errlen, "checkpoint: cannot gather state: %s", strerror(-rc));
		free(host);
		free(ts);
		return rc;
	}
	int k = 0;
	int64_t opt_step = t->opt ? t->opt->step : 0;
	ts[k++] = vec("model.params", ST_F32, host, np);
	ts[k++] = vec("state.step", ST_I64, &st->step, 1);
	// unsigned values are stored as I64 (same bytes): readers such as PyTorch's have no U64
	ts[k++] = vec("state.stream_pos", ST_I64, &st->stream_pos, 1);
	ts[k++] = vec("state.rng", ST_I64, st->rng, 4);
	if (t->opt) {
		ts[k++] = vec("optim.m", ST_F32, host + np, np);
		ts[k++] = vec("optim.v", ST_F32, host + 2 * np, np);
		ts[k++] = vec("optim.step", ST_I64, &opt_step, 1);
	}
	for (int i = 0; i < t->n_extra; i++) {
		ts[k] = t->extra[i];
		snprintf(ts[k].name, sizeof ts[k].name, "extra/%.150s", t->extra[i].name);
		k++;
	}
	char cfgs[256], name[64];
	model_config_str(t->cfg, cfgs, sizeof cfgs);
	const char *meta[4 + 2 * 16] = {"avclip.ckpt", CKPT_VERSION, "avclip.model", cfgs};
	int n_meta = 2;
	for (int i = 0; i < t->n_meta && n_meta < 2 + 16; i++, n_meta++) {
		meta[2 * n_meta] = t->meta[2 * i];
		meta[2 * n_meta + 1] = t->meta[2 * i + 1];
	}
	snprintf(name, sizeof name, "ckpt-%08lld.safetensors", (long long)st->step);
	rc = write_atomic(dir, name, ts, k, meta, n_meta, NULL, 0, err, errlen);
	if (!rc) {
		char line[80];
		int len = snprintf(line, sizeof line, "%s\n", name);
		rc = write_atomic(dir, CKPT_MARKER, NULL, 0, NULL, 0, line, (size_t)len, err, errlen);
	}
	if (!rc && keep_last > 0)
		prune(dir, keep_last);
	free(host);
	free(ts);
	return rc;
}

// the tensor `name` with exactly nbytes of dtype dt, or NULL with err set
static const StTensor *need(const StFile *f, const char *path, const char *name, StDtype dt, size_t nbytes, char *err,
			    size_t errlen)
{
	const StTensor *x = st_find(f, name);
	// checkpoints before I64 stored the unsigned values as U64: the same bytes
	int same = x && (x->dtype == dt || (x->dtype == ST_U64 && dt == ST_I64));
	if (!x)
		snprintf(err, errlen, "%s: no tensor %s", path, name);
	else if (!same || x->nbytes != nbytes)
		snprintf(err, errlen, "%s: tensor %s is %s of %zu bytes, expected %s of %zu", path, name,
			 st_dtype_name(x->dtype), x->nbytes, st_dtype_name(dt), nbytes);
	else
		return x;
	return NULL;
}

int ckpt_latest_path(const char *dir, char *path, size_t len, char *err, size_t errlen)
{
	char mpath[4096], name[256] = "";
	snprintf(mpath, sizeof mpath, "%s/%s", dir, CKPT_MARKER);
	FILE *m = fs_fopen_read(mpath, "r");
	if (!m) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", mpath, fs_strerror(e));
		return -e;
	}
	int got = fscanf(m, "%255s", name);
	fclose(m);
	if (got != 1 || ckpt_step_of(name) < 0 || strchr(name, '/')) {
		snprintf(err, errlen, "%s does not name a checkpoint file", mpath);
		return -EBADMSG;
	}
	if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	return 0;
}

// One rule for every tensor a checkpoint holds, not a list of names: weights, moments, the FastCLIP
// u tables, τ and its optimizer state and whatever a later version adds are finite, so a resume
// never starts from a state whose first step cannot be finite. A flat parameter-sized buffer
// names the parameter that holds the first bad value.
static int value_finite(const uint8_t *p, StDtype dt)
{
	switch (dt) {
	case ST_F32: {
		float v;
		memcpy(&v, p, sizeof v);
		return isfinite(v);
	}
	case ST_F64: {
		double v;
		memcpy(&v, p, sizeof v);
		return isfinite(v);
	}
	case ST_F16: return ((p[0] | p[1] << 8) & 0x7c00) != 0x7c00;
	case ST_BF16: return ((p[0] | p[1] << 8) & 0x7f80) != 0x7f80;
	default: return 1; // integers are always finite
	}
}

static const char *shape_str(const StTensor *x, char *buf, size_t len)
{
	size_t k = (size_t)snprintf(buf, len, "(");
	for (int i = 0; i < x->ndim && i < ST_MAX_DIMS && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? ", " : "", (long long)x->shape[i]);
	if (k < len)
		snprintf(buf + k, len - k, ")");
	return buf;
}

static int check_tensor_finite(const StTensor *x, const CkptTarget *t, int64_t np, const char *path, char *err,
			       size_t errlen)
{
	size_t es = st_dtype_size(x->dtype);
	if (x->dtype != ST_F32 && x->dtype != ST_F64 && x->dtype != ST_F16 && x->dtype != ST_BF16)
		return 0;
	if (x->dtype == ST_F32 && x->nbytes == sizeof(float) * (size_t)np &&
	    ((uintptr_t)x->data % sizeof(float)) == 0) {
		char what[4500];
		snprintf(what, sizeof what, "%.4300s (%.150s)", path, x->name);
		return model_params_check_finite(t->specs, t->n_specs, x->data, np, what, err, errlen);
	}
	const uint8_t *d = x->data;
	int64_t n = (int64_t)(x->nbytes / es), first = -1, count = 0;
	for (int64_t i = 0; i < n; i++)
		if (!value_finite(d + (size_t)i * es, x->dtype)) {
			if (first < 0)
				first = i;
			count++;
		}
	if (first < 0)
		return 0;
	snprintf(err, errlen, "%s: tensor %s holds %lld non-finite value%s (first at element %lld of %lld)", path,
		 x->name, (long long)count, count == 1 ? "" : "s", (long long)first, (long long)n);
	return -EINVAL;
}

int ckpt_load_latest(const char *dir, CkptTarget *t, CkptState *st, char *err, size_t errlen)
{
	char path[4400];
	int lrc = ckpt_latest_path(dir, path, sizeof path, err, errlen);
	if (lrc < 0)
		return lrc;
	StFile *f;
	int rc = st_open_as(&f, path, "not a valid checkpoint file", err, errlen);
	if (rc)
		return rc;
	char cfgs[256];
	model_config_str(t->cfg, cfgs, sizeof cfgs);
	const char *ver = st_meta(f, "avclip.ckpt"), *mc = st_meta(f, "avclip.model");
	int64_t np = kern_numel(t->params);
	size_t bytes = sizeof(float) * (size_t)np;
	const StTensor *p, *s, *sp, *r, *om = NULL, *ov = NULL, *os = NULL;
	rc = -EINVAL;
	if (!ver || strcmp(ver, CKPT_VERSION))
		snprintf(err, errlen,
			 "%s: checkpoint format %s, this build reads %s%s; resume it with the build that "
			 "wrote it, or start a new run (tools/eval still reads its weights)",
			 path, ver ? ver : "(none)", CKPT_VERSION,
			 ver && !strcmp(ver, "1") ? " (format 1 kept the FastCLIP tables and τ on the host)" : "");
	else if (!mc || strcmp(mc, cfgs))
		snprintf(err, errlen, "%s: written for model [%s], this run is [%s]", path, mc ? mc : "?", cfgs);
	else if ((p = need(f, path, "model.params", ST_F32, bytes, err, errlen)) &&
		 (s = need(f, path, "state.step", ST_I64, 8, err, errlen)) &&
		 (sp = need(f, path, "state.stream_pos", ST_I64, 8, err, errlen)) &&
		 (r = need(f, path, "state.rng", ST_I64, 32, err, errlen)) &&
		 (!t->opt || ((om = need(f, path, "optim.m", ST_F32, bytes, err, errlen)) &&
			      (ov = need(f, path, "optim.v", ST_F32, bytes, err, errlen)) &&
			      (os = need(f, path, "optim.step", ST_I64, 8, err, errlen))))) {
		rc = 0;
		for (int i = 0; i < t->n_extra && !rc; i++) {
			char en[200];
			snprintf(en, sizeof en, "extra/%s", t->extra[i].name);
			const StTensor *x = need(f, path, en, t->extra[i].dtype, t->extra[i].nbytes, err, errlen);
			if (!x)
				rc = -EINVAL;
			else if (x->ndim != t->extra[i].ndim ||
				 memcmp(x->shape, t->extra[i].shape, sizeof x->shape[0] * (size_t)x->ndim)) {
				char a[96], b[96];
				snprintf(err, errlen, "%s: tensor %s has shape %s, this run's is %s", path, en,
					 shape_str(x, a, sizeof a), shape_str(&t->extra[i], b, sizeof b));
				rc = -EINVAL;
			}
		}
		// every tensor in the file, read or not: a NaN anywhere would poison the steps after the resume
		for (int i = 0; i < st_count(f) && !rc; i++)
			rc = check_tensor_finite(st_entry(f, i), t, np, path, err, errlen);
		if (!rc)
			rc = kern_upload(t->ctx, t->params, p->data, bytes);
		if (!rc && t->opt) {
			rc = kern_upload(t->ctx, &t->opt->m, om->data, bytes);
			if (!rc)
				rc = kern_upload(t->ctx, &t->opt->v, ov->data, bytes);
			memcpy(&t->opt->step, os->data, 8);
		}
		for (int i = 0; i < t->n_extra && !rc; i++) {
			char en[200];
			snprintf(en, sizeof en, "extra/%s", t->extra[i].name);
			memcpy((void *)t->extra[i].data, st_find(f, en)->data, t->extra[i].nbytes);
		}
		if (!rc) {
			memcpy(&st->step, s->data, 8);
			memcpy(&st->stream_pos, sp->data, 8);
			memcpy(st->rng, r->data, 32);
			snprintf(err, errlen, "loaded %s", path);
		}
	}
	st_close(f);
	return rc;
}
