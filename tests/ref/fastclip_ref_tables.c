// FastCLIP per-sample tables: allocation, the reset rule, and writing gathered packs into
// every rank's full replica (what FastCLIP's set_params does after its all-gather).
#include "fastclip_ref.h" // defines: FastclipTables, fastclip_u_is_bad

#include <errno.h>  // defines: EINVAL, ENOMEM, ERANGE
#include <math.h>   // defines: isinf, isnan
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memset

bool fastclip_u_is_bad(float u)
{
	return isnan(u) || isinf(u) || u < 1e-35f;
}

void fastclip_tables_free(FastclipTables *t)
{
	if (!t)
		return;
	float **all[] = {&t->u1, &t->u2, &t->tau1, &t->tau2, &t->bound1, &t->bound2, &t->m1, &t->m2, &t->v1, &t->v2};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		free(*all[i]);
		*all[i] = NULL;
	}
	t->n = 0;
}

int fastclip_tables_create(FastclipTables *t, const FastclipConfig *cfg, int64_t n)
{
	if (!t || !cfg || n < 1 || fastclip_config_check(cfg) < 0)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->kind = cfg->kind;
	t->n = n;
	if (cfg->kind == FASTCLIP_OPENCLIP)
		return 0; // no per-sample state
	t->u1 = calloc((size_t)n, sizeof(float));
	t->u2 = calloc((size_t)n, sizeof(float));
	if (!t->u1 || !t->u2)
		goto nomem;
	if (cfg->kind == FASTCLIP_V2) {
		float **v2tabs[] = {&t->tau1, &t->tau2, &t->bound1, &t->bound2, &t->m1, &t->m2, &t->v1, &t->v2};
		for (size_t i = 0; i < sizeof(v2tabs) / sizeof(v2tabs[0]); i++)
			if (!(*v2tabs[i] = calloc((size_t)n, sizeof(float))))
				goto nomem;
		for (int64_t i = 0; i < n; i++)
			t->tau1[i] = t->tau2[i] = (float)cfg->tau_init;
	}
	return 0;
nomem:
	fastclip_tables_free(t);
	return -ENOMEM;
}

int fastclip_tables_scatter(FastclipTables *t, int64_t count, const int64_t *ids, const float *packs)
{
	if (!t || count < 0 || (count > 0 && (!ids || !packs)) || t->kind == FASTCLIP_OPENCLIP)
		return -EINVAL;
	int w = fastclip_pack_width(t->kind);
	for (int64_t r = 0; r < count; r++)
		if (ids[r] < 0 || ids[r] >= t->n)
			return -ERANGE;
	for (int64_t r = 0; r < count; r++) {
		const float *p = packs + r * w; // (w)
		int64_t i = ids[r];
		t->u1[i] = p[FASTCLIP_P_U1];
		t->u2[i] = p[FASTCLIP_P_U2];
		if (t->kind != FASTCLIP_V2)
			continue;
		t->tau1[i] = p[FASTCLIP_P_TAU1];
		t->tau2[i] = p[FASTCLIP_P_TAU2];
		t->bound1[i] = p[FASTCLIP_P_B1];
		t->bound2[i] = p[FASTCLIP_P_B2];
		t->m1[i] = p[FASTCLIP_P_M1];
		t->m2[i] = p[FASTCLIP_P_M2];
		t->v1[i] = p[FASTCLIP_P_V1];
		t->v2[i] = p[FASTCLIP_P_V2];
	}
	return 0;
}
