// Saving and loading the flat parameter buffer as safetensors under open_clip names; loading
// converts half/bfloat/double to f32 and reports missing or mis-shaped tensors by name.
#include "model.h" // defines: st_model_save, st_model_load, StFile, StTensor, st_open_err, model_params_check_finite

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void shape_str(char *buf, size_t len, int nd, const int64_t *shape)
{
	size_t o = (size_t)snprintf(buf, len, "(");
	for (int i = 0; i < nd && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "", (long long)shape[i]);
	if (o < len)
		snprintf(buf + o, len - o, nd == 1 ? ",)" : ")");
}

int st_model_tensors(StTensor *t, const ParamSpec *specs, int n, const float *host, const char *skip)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (skip && !strcmp(specs[i].name, skip))
			continue;
		snprintf(t[k].name, sizeof t[k].name, "%s", specs[i].name);
		t[k].dtype = ST_F32;
		t[k].ndim = specs[i].ndim;
		for (int d = 0; d < specs[i].ndim; d++)
			t[k].shape[d] = specs[i].shape[d];
		t[k].data = host + specs[i].offset;
		t[k].nbytes = sizeof(float) * (size_t)specs[i].numel;
		k++;
	}
	return k;
}

int st_model_save(const char *path, KernCtx *ctx, const ParamSpec *specs, int n, const KTensor *params,
		  const char *const *meta, int n_meta)
{
	if (params->dtype != KDT_F32)
		return -EINVAL;
	size_t bytes = kern_nbytes(params);
	float *host = malloc(bytes);
	StTensor *t = calloc((size_t)n, sizeof *t);
	int rc = (!host || !t) ? -ENOMEM : kern_download(ctx, host, bytes, params);
	if (!rc)
		rc = st_write(path, t, st_model_tensors(t, specs, n, host, NULL), meta, n_meta);
	free(host);
	free(t);
	return rc;
}

static float half_to_float(uint16_t h)
{
	int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
	float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
	return s ? -v : v;
}

static int to_f32(const StTensor *t, float *dst)
{
	size_t n = t->nbytes / st_dtype_size(t->dtype);
	const uint8_t *p = t->data;
	for (size_t i = 0; i < n; i++) {
		switch (t->dtype) {
		case ST_F32: memcpy(&dst[i], p + 4 * i, 4); break;
		case ST_F64: {
			double d;
			memcpy(&d, p + 8 * i, 8);
			dst[i] = (float)d;
			break;
		}
		case ST_F16:
		case ST_BF16: {
			uint16_t h;
			memcpy(&h, p + 2 * i, 2);
			dst[i] = t->dtype == ST_F16 ? half_to_float(h) : kern_f32_from_bf16(h);
			break;
		}
		default: return -EINVAL;
		}
	}
	return 0;
}

int st_model_load(const char *path, KernCtx *ctx, const ParamSpec *specs, int n, KTensor *params,
		  const StLoadOpts *opts, char *err, size_t errlen)
{
	StLoadOpts none = {0};
	if (!opts)
		opts = &none;
	snprintf(err, errlen, "ok");
	if (params->dtype != KDT_F32) {
		snprintf(err, errlen, "parameters must be f32 to load weights");
		return -EINVAL;
	}
	StFile *f;
	int rc = st_open_as(&f, path, "not a valid safetensors file", err, errlen);
	if (rc)
		return rc;
	size_t bytes = kern_nbytes(params);
	float *host = malloc(bytes);
	rc = host ? kern_download(ctx, host, bytes, params) : -ENOMEM;
	size_t plen = opts->prefix ? strlen(opts->prefix) : 0;
	for (int i = 0; i < n && !rc; i++) {
		const ParamSpec *s = &specs[i];
		if (plen && strncmp(s->name, opts->prefix, plen))
			continue;
		int skipped = 0;
		for (int k = 0; k < opts->n_skip && !skipped; k++)
			skipped = !strcmp(s->name, opts->skip[k]);
		if (skipped)
			continue;
		const StTensor *t = st_find(f, s->name);
		if (!t) {
			if (opts->allow_missing || !strcmp(s->name, "visual.temporal_embedding"))
				continue;
			char want[96];
			shape_str(want, sizeof want, s->ndim, s->shape);
			snprintf(err, errlen, "%s: tensor %s is missing (model expects shape %s)", path, s->name, want);
			rc = -ENOENT;
			break;
		}
		int same = t->ndim == s->ndim;
		for (int d = 0; same && d < s->ndim; d++)
			same = t->shape[d] == s->shape[d];
		if (!same) {
			char got[96], want[96];
			shape_str(got, sizeof got, t->ndim, t->shape);
			shape_str(want, sizeof want, s->ndim, s->shape);
			snprintf(err, errlen, "%s: tensor %s has shape %s in the file, the model expects %s", path,
				 s->name, got, want);
			rc = -EINVAL;
			break;
		}
		if (to_f32(t, host + s->offset)) {
			snprintf(err, errlen, "%s: tensor %s has dtype %s, not a float type", path, s->name,
				 st_dtype_name(t->dtype));
			rc = -EINVAL;
		}
	}
	if (!rc)
		rc = model_params_check_finite(specs, n, host, (int64_t)(bytes / sizeof(float)), path, err, errlen);
	if (!rc)
		rc = kern_upload(ctx, params, host, bytes);
	free(host);
	st_close(f);
	return rc;
}
