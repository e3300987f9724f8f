// Checks the safetensors errors: a missing tensor and a mis-shaped tensor are named with both
// shapes, a CLIP file without the temporal embedding loads (it stays zero), a skip list lets a
// differently-sized projection through, integer dtypes are refused, and truncated or
// inconsistent files are -EBADMSG rather than a crash.
#include "model.h" // defines: ClipModel, st_write, st_open, st_model_load

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ClipModel *m;
static KernCtx *c;
static float *host;
static char path[64];

// writes the model's tensors to path, dropping `skip` and giving `reshape` a wrong shape
static int write_variant(const char *skip, const char *reshape, StDtype dt_of_reshape)
{
	StTensor *t = calloc((size_t)m->n_specs, sizeof *t);
	int n = 0;
	for (int i = 0; i < m->n_specs; i++) {
		const ParamSpec *s = &m->specs[i];
		if (skip && !strcmp(s->name, skip))
			continue;
		StTensor *x = &t[n++];
		snprintf(x->name, sizeof x->name, "%s", s->name);
		x->dtype = ST_F32;
		x->ndim = s->ndim;
		memcpy(x->shape, s->shape, sizeof(int64_t) * (size_t)s->ndim);
		x->data = host + s->offset;
		x->nbytes = 4 * (size_t)s->numel;
		if (reshape && !strcmp(s->name, reshape)) {
			if (dt_of_reshape == ST_I32) {
				x->dtype = ST_I32;
			} else { // (a, b) -> (b, a) unless square; else (a*b)
				x->ndim = 2;
				x->shape[0] = s->shape[1];
				x->shape[1] = s->shape[0] + 0;
				if (s->shape[0] == s->shape[1]) {
					x->ndim = 1;
					x->shape[0] = s->numel;
				}
			}
		}
	}
	int rc = st_write(path, t, n, NULL, 0);
	free(t);
	return rc;
}

static int expect(const char *what, int got, int want, const char *err, const char *must1, const char *must2)
{
	int ok = got == want && (!must1 || strstr(err, must1)) && (!must2 || strstr(err, must2));
	printf("%-4s %-36s rc %d: %s\n", ok ? "ok" : "FAIL", what, got, err);
	return !ok;
}

static int write_raw(const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	fwrite(p, 1, n, f);
	return fclose(f);
}

int main(void)
{
	ModelConfig cfg;
	if (kern_ctx_create_cpu(&c, 2) || model_config_preset(&cfg, "tiny"))
		return 1;
	cfg.vocab = 300;
	cfg.embed_dim = 32; // visual.proj (64, 32) is not square: a transposed copy must be refused
	if (clip_model_create(&m, c, &cfg, 1, KDT_F32) || model_init_params(c, &cfg, &m->params, 3))
		return 1;
	size_t nb = kern_nbytes(&m->params);
	host = malloc(nb);
	kern_download(c, host, nb, &m->params);
	snprintf(path, sizeof path, "/tmp/test_st_errors_%d.safetensors", (int)getpid());
	char err[320];
	int bad = 0;

	write_variant("visual.ln_post.bias", NULL, ST_F32);
	bad |= expect("missing tensor", st_model_load(path, c, m->specs, m->n_specs, &m->params, NULL, err, sizeof err),
		      -ENOENT, err, "visual.ln_post.bias", "(64,)");
	write_variant("visual.proj", NULL, ST_F32);
	StLoadOpts txt = {.prefix = "transformer."};
	bad |= expect("missing tensor outside the prefix",
		      st_model_load(path, c, m->specs, m->n_specs, &m->params, &txt, err, sizeof err), 0, err, NULL,
		      NULL);
	write_variant("visual.temporal_embedding", NULL, ST_F32);
	bad |= expect("CLIP file without temporal embedding",
		      st_model_load(path, c, m->specs, m->n_specs, &m->params, NULL, err, sizeof err), 0, err, NULL,
		      NULL);
	write_variant(NULL, "visual.proj", ST_F32);
	bad |= expect("mis-shaped tensor",
		      st_model_load(path, c, m->specs, m->n_specs, &m->params, NULL, err, sizeof err), -EINVAL, err,
		      "visual.proj", "(32, 64) in the file, the model expects (64, 32)");
	const char *skip[] = {"visual.proj"};
	StLoadOpts sk = {.skip = skip, .n_skip = 1};
	bad |= expect("mis-shaped tensor on the skip list",
		      st_model_load(path, c, m->specs, m->n_specs, &m->params, &sk, err, sizeof err), 0, err, NULL,
		      NULL);
	write_variant(NULL, "transformer.resblocks.1.attn.out_proj.weight", ST_F32);
	bad |= expect("mis-shaped square tensor",
		      st_model_load(path, c, m->specs, m->n_specs, &m->params, NULL, err, sizeof err), -EINVAL, err,
		      "(4096,)", "(64, 64)");
	write_variant(NULL, "visual.ln_pre.weight", ST_I32);
	bad |= expect("integer dtype", st_model_load(path, c, m->specs, m->n_specs, &m->params, NULL, err, sizeof err),
		      -EINVAL, err, "visual.ln_pre.weight", "I32");
	bad |= expect(
		"no such file",
		st_model_load("/nonexistent/x.safetensors", c, m->specs, m->n_specs, &m->params, NULL, err, sizeof err),
		-ENOENT, err, "/nonexistent", NULL);

	// malformed files
	StFile *f;
	const char hdr_big[] = "\xff\xff\x00\x00\x00\x00\x00\x00{}";
	write_raw(hdr_big, sizeof hdr_big - 1);
	bad |= expect("header length past the end", st_open(&f, path), -EBADMSG, "", NULL, NULL);
	const char beyond[] =
		"\x38\x00\x00\x00\x00\x00\x00\x00{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}"
		"  \x01\x02\x03";
	write_raw(beyond, sizeof beyond - 1);
	bad |= expect("data offsets past the end", st_open(&f, path), -EBADMSG, "", NULL, NULL);
	const char wrongsize[] =
		"\x38\x00\x00\x00\x00\x00\x00\x00{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}"
		"  \x01\x02\x03\x04\x05\x06\x07\x08";
	write_raw(wrongsize, sizeof wrongsize - 1);
	bad |= expect("shape not matching byte range", st_open(&f, path), -EBADMSG, "", NULL, NULL);
	const char ok[] =
		"\x38\x00\x00\x00\x00\x00\x00\x00{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}"
		"  \x01\x02\x03\x04\x05\x06\x07\x08";
	write_raw(ok, sizeof ok - 1);
	int rc = st_open(&f, path);
	bad |= expect("hand-written valid file", rc, 0, "", NULL, NULL);
	if (!rc)
		st_close(f);
	write_raw("abc", 3);
	bad |= expect("3-byte file", st_open(&f, path), -EBADMSG, "", NULL, NULL);
	unlink(path);
	free(host);
	clip_model_destroy(m);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL safetensors errors" : "PASS safetensors errors name the tensor and both shapes");
	return bad;
}
