// FastCLIP u update, reset rule, γ schedule, v2 per-sample τ update and v0/v3 τ steps against
// the PyTorch twin's fixture (tools/ref/fastclip_ref.py), compared tensor by tensor by name.
#include <math.h>   // defines: fabs, isnan, log, exp
#include <stdint.h> // defines: int64_t, uint32_t
#include <stdio.h>  // defines: FILE, fopen, fread, printf
#include <stdlib.h> // defines: malloc, free, getenv
#include <string.h> // defines: memcmp, strcmp, strlen

#include "fastclip_ref.h" // defines: fastclip_local, fastclip_surrogate, fastclip_temp_step

#define FIXTURE "tests/fixtures/fastclip_ref_v1.bin"
enum { MAXT = 512 };

typedef struct {
	char name[48];
	uint32_t dtype, ndim, shape[4];
	void *data; // float32 (dtype 0) or int64 (dtype 1)
	size_t count;
} Tensor;

static Tensor tens[MAXT];
static int ntens, fails, compared;

static int load(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("cannot open %s\n", path);
		return -1;
	}
	char magic[8];
	uint32_t hdr[3];
	if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "FCREF\0\0\0", 8) != 0 || fread(hdr, 4, 3, f) != 3) {
		printf("%s: not a FastCLIP reference fixture\n", path);
		fclose(f);
		return -1;
	}
	if (hdr[0] != 1 || hdr[1] != 20 || hdr[2] > MAXT) {
		printf("%s: fixture version %u (header %u, %u tensors), this test reads version 1\n", path, hdr[0],
		       hdr[1], hdr[2]);
		fclose(f);
		return -1;
	}
	for (ntens = 0; ntens < (int)hdr[2]; ntens++) {
		Tensor *t = &tens[ntens];
		if (fread(t->name, 1, 48, f) != 48 || fread(&t->dtype, 4, 6, f) != 6 || t->dtype > 1) {
			printf("%s: truncated tensor header\n", path);
			fclose(f);
			return -1;
		}
		t->name[47] = 0;
		t->count = (size_t)t->shape[0] * t->shape[1] * t->shape[2] * t->shape[3];
		size_t esz = t->dtype ? 8 : 4;
		t->data = malloc(t->count * esz);
		if (!t->data || fread(t->data, esz, t->count, f) != t->count) {
			printf("%s: truncated data of %s\n", path, t->name);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

static const Tensor *get(const char *name)
{
	for (int i = 0; i < ntens; i++)
		if (strcmp(tens[i].name, name) == 0)
			return &tens[i];
	printf("fixture lacks tensor %s\n", name);
	exit(1);
}

static double cfgv(const char *key)
{
	char n[64];
	snprintf(n, sizeof(n), "cfg/%s", key);
	return ((const float *)get(n)->data)[0];
}

// tolerance by tensor name (its last path component); "max" compares against the tensor's
// largest magnitude (gradients, which cancel to near 0), "elem" element by element (tables)
static const struct {
	const char *suffix;
	double tol;
	int elementwise;
} tols[] = {
	{"loss", 1e-5, 1}, {"de1", 2e-5, 0},    {"de2", 2e-5, 0},   {"u1", 1e-5, 1},
	{"u2", 1e-5, 1},   {"tau1", 1e-5, 1},   {"tau2", 1e-5, 1},  {"b1", 1e-5, 1},
	{"b2", 1e-5, 1},   {"m1", 1e-4, 0},     {"m2", 1e-4, 0},    {"v1", 1e-4, 0},
	{"v2", 1e-4, 0},   {"dlog_s", 1e-5, 1}, {"log_s", 1e-6, 1}, {"gamma", 1e-6, 1},
};

static void compare(const char *name, const double *got, size_t n)
{
	const Tensor *r = get(name);
	const char *suf = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	double tol = -1;
	int elem = 1;
	for (size_t i = 0; i < sizeof(tols) / sizeof(tols[0]); i++)
		if (strcmp(suf, tols[i].suffix) == 0) {
			tol = tols[i].tol;
			elem = tols[i].elementwise;
		}
	if (tol < 0 || r->count != n) {
		printf("FAIL %s: %s\n", name, tol < 0 ? "no tolerance for this name" : "size differs");
		fails++;
		return;
	}
	const float *ref = r->data;
	double mx = 0.0, worst = 0.0;
	for (size_t i = 0; i < n; i++)
		mx = fmax(mx, fabs(ref[i]));
	for (size_t i = 0; i < n; i++) {
		double den = elem ? fabs(ref[i]) + 1e-30 : mx + 1e-30;
		double e = (isnan(ref[i]) || isnan(got[i])) ? (isnan(ref[i]) && isnan(got[i]) ? 0 : INFINITY)
							    : fabs(got[i] - ref[i]) / den;
		worst = fmax(worst, e);
	}
	compared++;
	if (worst > tol) {
		printf("FAIL %-16s worst rel err %.3g > %.3g\n", name, worst, tol);
		fails++;
	}
}

static void compare_f(const char *name, const float *got, size_t n)
{
	double *g = malloc(n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		g[i] = got[i];
	compare(name, g, n);
	free(g);
}

static void run(FastclipKind kind, const char *tag, int K, int B, int D, int NS)
{
	FastclipConfig cfg;
	fastclip_config_default(&cfg, kind);
	cfg.gamma_min = cfgv("gamma_min");
	cfg.gamma_decay_epochs = (int)cfgv("gamma_decay_epochs");
	cfg.rho = cfgv("rho");
	cfg.eps = 1e-14;
	cfg.beta1_tau = cfgv("beta1");
	cfg.beta2_tau = cfgv("beta2");
	cfg.eps_tau = cfgv("eps_tau");
	char key[64];
	snprintf(key, sizeof(key), "%s_tau_init", tag);
	cfg.tau_init = cfgv(key);
	if (kind == FASTCLIP_V2)
		cfg.lr_tau = cfgv("v2_lr_tau");
	if (kind == FASTCLIP_V3)
		cfg.lr_tau = cfgv("v3_lr_tau");
	FastclipTables t;
	FastclipTemp temp;
	if (fastclip_tables_create(&t, &cfg, NS) < 0 || fastclip_temp_init(&temp, cfg.tau_init) < 0) {
		fails++;
		return;
	}
	const int N = K * B, w = fastclip_pack_width(kind);
	float *pack = malloc(sizeof(float) * N * w), *de1 = malloc(sizeof(float) * N * D),
	      *de2 = malloc(sizeof(float) * N * D);
	double loss[16], *tab = malloc(sizeof(double) * NS);
	for (int si = 0; si < 4; si++) {
		char n[64];
		snprintf(n, sizeof(n), "in/s%d/E1", si);
		const float *E1 = get(n)->data;
		snprintf(n, sizeof(n), "in/s%d/E2", si);
		const float *E2 = get(n)->data;
		snprintf(n, sizeof(n), "in/s%d/ids", si);
		const int64_t *ids = get(n)->data;
		snprintf(n, sizeof(n), "in/s%d/epoch", si);
		int epoch = (int)((const int64_t *)get(n)->data)[0];
		if (si == 2) { // the twin's reset-rule probe
			t.u1[ids[0]] = NAN;
			t.u2[ids[1]] = INFINITY;
			t.u1[ids[2]] = 0.0f;
			t.u2[ids[3]] = -1.0f;
		}
		double lr = kind == FASTCLIP_V3 ? fastclip_tau_lr_rgclg(&cfg, temp.log_s) : cfgv("v0_lr");
		FastclipBatch b = {.B = B, .K = K, .d = D, .E1 = E1, .E2 = E2, .log_s = temp.log_s};
		for (int r = 0; r < K; r++) {
			b.rank = r;
			b.e1 = E1 + (size_t)r * B * D;
			b.e2 = E2 + (size_t)r * B * D;
			b.ids = ids + r * B;
			if (fastclip_local(&cfg, &t, epoch, &b, pack + (size_t)r * B * w) < 0)
				fails++;
		}
		if (fastclip_tables_scatter(&t, N, ids, pack) < 0)
			fails++;
		double dls = 0.0;
		for (int r = 0; r < K; r++) {
			b.rank = r;
			b.e1 = E1 + (size_t)r * B * D;
			b.e2 = E2 + (size_t)r * B * D;
			FastclipGrads g = {.de1 = de1 + (size_t)r * B * D, .de2 = de2 + (size_t)r * B * D};
			if (fastclip_surrogate(&cfg, &b, pack + (size_t)r * B * w, pack, &g) < 0)
				fails++;
			loss[r] = g.loss;
			dls += g.dlog_s / K;
		}
		char p[32];
		snprintf(p, sizeof(p), "%s/s%d/", tag, si);
#define CMPF(field, ptr, cnt)                                                                                          \
	do {                                                                                                           \
		snprintf(n, sizeof(n), "%s%s", p, field);                                                              \
		compare_f(n, ptr, cnt);                                                                                \
	} while (0)
		snprintf(n, sizeof(n), "%sloss", p);
		compare(n, loss, K);
		CMPF("de1", de1, (size_t)N * D);
		CMPF("de2", de2, (size_t)N * D);
		CMPF("u1", t.u1, NS);
		CMPF("u2", t.u2, NS);
		if (kind == FASTCLIP_V2) {
			CMPF("tau1", t.tau1, NS);
			CMPF("tau2", t.tau2, NS);
			CMPF("b1", t.bound1, NS);
			CMPF("b2", t.bound2, NS);
			CMPF("m1", t.m1, NS);
			CMPF("m2", t.m2, NS);
			CMPF("v1", t.v1, NS);
			CMPF("v2", t.v2, NS);
		}
		if (kind == FASTCLIP_V0 || kind == FASTCLIP_V3) {
			snprintf(n, sizeof(n), "%sdlog_s", p);
			compare(n, &dls, 1);
			if (fastclip_temp_step(&temp, dls, lr, cfg.beta1_tau, cfg.beta2_tau, cfg.eps_tau) < 0)
				fails++;
			snprintf(n, sizeof(n), "%slog_s", p);
			compare(n, &temp.log_s, 1);
		}
	}
	free(pack);
	free(de1);
	free(de2);
	free(tab);
	fastclip_tables_free(&t);
}

int main(void)
{
	const char *src = getenv("SRCDIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", src ? src : ".", FIXTURE);
	if (load(path) < 0)
		return 1;
	const int64_t *shape = get("cfg/shape")->data;
	int K = (int)shape[0], B = (int)shape[1], D = (int)shape[2], NS = (int)shape[3];
	FastclipConfig cfg;
	fastclip_config_default(&cfg, FASTCLIP_V1);
	cfg.gamma_min = cfgv("gamma_min");
	cfg.gamma_decay_epochs = (int)cfgv("gamma_decay_epochs");
	double gam[6];
	for (int e = 0; e < 6; e++)
		gam[e] = fastclip_gamma(&cfg, e);
	compare("gamma", gam, 6);
	run(FASTCLIP_V0, "v0", K, B, D, NS);
	run(FASTCLIP_V1, "v1", K, B, D, NS);
	run(FASTCLIP_V2, "v2", K, B, D, NS);
	run(FASTCLIP_V3, "v3", K, B, D, NS);
	printf("%d tensors compared, %d failed\n", compared, fails);
	printf(fails ? "FAIL: C FastCLIP differs from the PyTorch twin\n" : "C FastCLIP matches the PyTorch twin\n");
	return fails ? 1 : 0;
}
