// The safetensors reader follows the format strictly and never reads past its input: \uXXXX
// escapes are parsed by length (a header ending at a guard page), duplicate tensor names and
// metadata keys, bytes after the JSON other than space padding, a header length beyond the
// file or over the 100,000,000-byte limit, and data the tensors do not tile are refused with a
// reason. Non-finite weights are refused at load, naming the tensor: open_clip weights,
// checkpoints (weights and optimizer moments).
#include "model.h" // defines: ckpt_save, ckpt_load_latest, ClipModel, st_parse, st_open_err, st_model_save, st_model_load
#include "testutil.h" // defines: CHECK, CHECK_OK

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/stat.h>

// the bytes of a safetensors file: header length, JSON (as given, no padding added), data
static size_t file_of(uint8_t *out, const char *json, const void *data, size_t nd)
{
	uint64_t hl = strlen(json);
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(hl >> (8 * i));
	memcpy(out + 8, json, hl);
	if (nd)
		memcpy(out + 8 + hl, data, nd);
	return 8 + hl + nd;
}

static int expect_bad(const char *what, const char *json, const void *data, size_t nd, const char *reason)
{
	static uint8_t buf[1 << 16];
	size_t n = file_of(buf, json, data, nd);
	StFile *f = NULL;
	char err[256];
	int rc = st_parse(&f, buf, n, err, sizeof err);
	int ok = rc == -EBADMSG && strstr(err, reason);
	printf("%-4s %-34s rc %d: %s\n", ok ? "ok" : "FAIL", what, rc, err);
	if (!rc)
		st_close(f);
	return !ok;
}

// input that ends exactly at a PROT_NONE page: any read past its end faults
static uint8_t *guarded(const uint8_t *bytes, size_t n, uint8_t **map, size_t *maplen)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (n + pg - 1) / pg * pg;
	*maplen = body + pg;
	*map = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(*map != MAP_FAILED);
	CHECK(mprotect(*map + body, pg, PROT_NONE) == 0);
	uint8_t *p = *map + body - n;
	memcpy(p, bytes, n);
	return p;
}

static int escapes_by_length(void)
{
	int bad = 0;
	// a header that ends inside "\u00" and then "\u0041" with 'A's (no NUL anywhere) up to the
	// guard page: sscanf would measure the input with strlen and fault
	static const char *cut[] = {"{\"\\u00", "{\"\\u0041AAAA", "{\"a\\u", "{\"\\u004"};
	for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
		uint8_t raw[64], *map;
		size_t n = file_of(raw, cut[i], NULL, 0), maplen;
		uint8_t *p = guarded(raw, n, &map, &maplen);
		StFile *f;
		char err[256];
		int rc = st_parse(&f, p, n, err, sizeof err);
		printf("%-4s %-34s rc %d: %s\n", rc == -EBADMSG ? "ok" : "FAIL", cut[i], rc, err);
		bad |= rc != -EBADMSG;
		munmap(map, maplen);
	}
	// a valid escape in a name, the header ending at the guard page
	uint8_t raw[128], *map;
	size_t n = file_of(raw, "{\"\\u0061\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", "x", 1),
	       maplen;
	uint8_t *p = guarded(raw, n, &map, &maplen);
	StFile *f;
	char err[256];
	int rc = st_parse(&f, p, n, err, sizeof err);
	bad |= rc != 0 || !st_find(f, "a");
	printf("%-4s %-34s rc %d\n", rc == 0 ? "ok" : "FAIL", "escaped name at the guard page", rc);
	if (!rc)
		st_close(f);
	munmap(map, maplen);
	return bad;
}

static int strict_format(void)
{
	int bad = 0;
	const char d8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	bad |= expect_bad("duplicate tensor",
			  "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
			  "\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]}}",
			  d8, 8, "tensor a appears twice");
	bad |= expect_bad("duplicate metadata key", "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", NULL, 0,
			  "metadata key 'k' appears twice");
	bad |= expect_bad("two __metadata__", "{\"__metadata__\":{},\"__metadata__\":{}}", NULL, 0,
			  "__metadata__ appears twice");
	bad |= expect_bad("duplicate field",
			  "{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]}}", d8, 8,
			  "field 'dtype' appears twice");
	bad |= expect_bad("bytes after the JSON", "{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]}}  x",
			  d8, 8, "not space padding");
	bad |= expect_bad("a second JSON value", "{}{}", NULL, 0, "not space padding");
	bad |= expect_bad("newline padding", "{}\n", NULL, 0, "not space padding");
	bad |= expect_bad("leading space", " {}", NULL, 0, "must begin with '{'");
	bad |= expect_bad("hole in the data", "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]}}", d8, 8,
			  "hole");
	bad |= expect_bad("overlapping tensors",
			  "{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]},"
			  "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]}}",
			  d8, 8, "overlap");
	bad |= expect_bad("trailing data bytes", "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", d8,
			  8, "cover 4 of the 8 data bytes");
	bad |= expect_bad("NUL escape in a name", "{\"\\u0000\":{}}", NULL, 0, "only ASCII");
	// the header length: past the file, and over the limit (a sparse file larger than it)
	uint8_t raw[16] = {0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}'};
	StFile *f;
	char err[256];
	int rc = st_parse(&f, raw, 10, err, sizeof err);
	printf("%-4s %-34s rc %d: %s\n", rc == -EBADMSG && strstr(err, "header length 65535") ? "ok" : "FAIL",
	       "header length past the end", rc, err);
	bad |= rc != -EBADMSG || !strstr(err, "header length 65535");
	char path[64];
	snprintf(path, sizeof path, "/tmp/test_st_strict_%d.safetensors", (int)getpid());
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	uint64_t hl = 100000001;
	CHECK(fd >= 0 && pwrite(fd, &hl, 8, 0) == 8 && pwrite(fd, "{}", 2, 8) == 2 && ftruncate(fd, 100000100) == 0);
	close(fd);
	rc = st_open_err(&f, path, err, sizeof err);
	printf("%-4s %-34s rc %d: %s\n", rc == -EBADMSG && strstr(err, "at most 100000000") ? "ok" : "FAIL",
	       "header over the format's limit", rc, err);
	bad |= rc != -EBADMSG || !strstr(err, "at most 100000000");
	unlink(path);
	return bad;
}

static int non_finite_weights(void)
{
	KernCtx *c;
	ModelConfig cfg;
	ClipModel *m;
	CHECK_OK(kern_ctx_create_cpu(&c, 1));
	CHECK_OK(model_config_preset(&cfg, "tiny"));
	cfg.vocab = 300;
	CHECK_OK(clip_model_create(&m, c, &cfg, 1, KDT_F32));
	CHECK_OK(model_init_params(c, &cfg, &m->params, 3));
	size_t nb = kern_nbytes(&m->params);
	float *host = malloc(nb);
	CHECK_OK(kern_download(c, host, nb, &m->params));
	const ParamSpec *s = NULL;
	for (int i = 0; i < m->n_specs && !s; i++)
		if (!strcmp(m->specs[i].name, "transformer.resblocks.0.mlp.c_fc.weight"))
			s = &m->specs[i];
	CHECK(s);
	int bad = 0;
	char path[64], dir[64], err[512];
	snprintf(path, sizeof path, "/tmp/test_st_strict_%d.safetensors", (int)getpid());
	// open_clip-named weights with one NaN: refused, the tensor named, the model left as it was
	host[s->offset + 5] = NAN;
	CHECK_OK(kern_upload(c, &m->params, host, nb));
	CHECK_OK(st_model_save(path, c, m->specs, m->n_specs, &m->params, NULL, 0));
	host[s->offset + 5] = 0.5f;
	CHECK_OK(kern_upload(c, &m->params, host, nb));
	int rc = st_model_load(path, c, m->specs, m->n_specs, &m->params, NULL, err, sizeof err);
	printf("%-4s %-34s rc %d: %s\n", rc == -EINVAL && strstr(err, s->name) ? "ok" : "FAIL",
	       "NaN in open_clip weights", rc, err);
	bad |= rc != -EINVAL || !strstr(err, s->name) || !strstr(err, "first: nan at element 5");
	float back;
	kern_download(c, host, nb, &m->params);
	back = host[s->offset + 5];
	bad |= back != 0.5f;
	// a checkpoint with an infinite weight, then one with finite weights and an infinite moment
	snprintf(dir, sizeof dir, "/tmp/test_st_strict_ckpt_%d", (int)getpid());
	CHECK(mkdir(dir, 0700) == 0);
	host[s->offset] = INFINITY;
	CHECK_OK(kern_upload(c, &m->params, host, nb));
	CkptTarget t = {.ctx = c, .cfg = &cfg, .specs = m->specs, .n_specs = m->n_specs, .params = &m->params};
	CkptState st = {.step = 1};
	CHECK_OK(ckpt_save(dir, &t, &st, 0, err, sizeof err));
	rc = ckpt_load_latest(dir, &t, &st, err, sizeof err);
	printf("%-4s %-34s rc %d: %s\n", rc == -EINVAL && strstr(err, s->name) ? "ok" : "FAIL", "inf in a checkpoint",
	       rc, err);
	bad |= rc != -EINVAL || !strstr(err, s->name) || !strstr(err, "(model.params)");
	host[s->offset] = 0.25f;
	CHECK_OK(kern_upload(c, &m->params, host, nb));
	OptConfig oc;
	optim_config_default(&oc);
	Optimizer *opt;
	CHECK_OK(optim_create(&opt, c, &oc, m->specs, m->n_specs, m->n_params));
	float *mom = calloc((size_t)m->n_params, sizeof(float));
	mom[s->offset + 2] = -INFINITY;
	CHECK_OK(kern_upload(c, &opt->v, mom, nb));
	t.opt = opt;
	st.step = 2;
	CHECK_OK(ckpt_save(dir, &t, &st, 0, err, sizeof err));
	rc = ckpt_load_latest(dir, &t, &st, err, sizeof err);
	printf("%-4s %-34s rc %d: %s\n", rc == -EINVAL && strstr(err, s->name) ? "ok" : "FAIL", "-inf optimizer moment",
	       rc, err);
	bad |= rc != -EINVAL || !strstr(err, s->name) || !strstr(err, "(optim.v)") || !strstr(err, "-inf at element 2");
	free(mom);
	optim_destroy(opt);
	char rm[160];
	snprintf(rm, sizeof rm, "rm -rf %s", dir);
	CHECK(system(rm) == 0);
	unlink(path);
	free(host);
	clip_model_destroy(m);
	kern_ctx_destroy(c);
	return bad;
}

int main(void)
{
	int bad = escapes_by_length();
	bad |= strict_format();
	bad |= non_finite_weights();
	printf("%s\n",
	       bad ? "FAIL safetensors strictness" : "safetensors: strict format, bounded parsing, finite weights");
	return bad;
}
