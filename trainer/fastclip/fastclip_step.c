// The distributed step on features (DESIGN §7 steps 2-4): FastCLIP gathers features without
// gradient plus ids and per-sample packs, then its backward is purely local; OpenCLIP gathers
// features and reduce-scatters the gathered copies' gradients (gather-with-gradient).
#include "fastclip_step.h" // defines: FastclipStep, ...

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdlib.h> // defines: calloc, malloc, free
#include <string.h> // defines: memcpy

struct FastclipStep {
	FastclipConfig cfg;
	Comm *comm;
	FastclipTables *tables;
	int B, d, K, w;
	float *send;       // (2, B, d) e1 then e2, one all-gather
	float *gath;       // (K, 2, B, d)
	float *E1, *E2;    // (K·B, d) each
	int64_t *ids_all;  // (K·B)
	float *pack;       // (B, w)
	float *pack_all;   // (K·B, w)
	float *dE1, *dE2;  // (K·B, d) openclip: gradients of the gathered copies
	float *rs_send;    // (K, 2, B, d) openclip: reduce-scatter input, block q for rank q
	float *rs_recv;    // (2, B, d)
};

void fastclip_step_free(FastclipStep *s)
{
	if (!s)
		return;
	free(s->send);
	free(s->gath);
	free(s->E1);
	free(s->E2);
	free(s->ids_all);
	free(s->pack);
	free(s->pack_all);
	free(s->dE1);
	free(s->dE2);
	free(s->rs_send);
	free(s->rs_recv);
	free(s);
}

int fastclip_step_create(FastclipStep **out, const FastclipConfig *cfg, Comm *comm, FastclipTables *tables,
			 int B, int d)
{
	if (!out || !cfg || !comm || B < 1 || d < 1 || fastclip_config_check(cfg) < 0)
		return -EINVAL;
	if ((cfg->kind != FASTCLIP_OPENCLIP) != (tables != NULL) || (tables && tables->kind != cfg->kind))
		return -EINVAL;
	if ((int64_t)comm->world * B < 2)
		return -EINVAL;
	FastclipStep *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->comm = comm;
	s->tables = tables;
	s->B = B;
	s->d = d;
	s->K = comm->world;
	s->w = fastclip_pack_width(cfg->kind);
	size_t N = (size_t)s->K * B, fe = (size_t)B * d;
	s->send = malloc(2 * fe * sizeof(float));
	s->gath = malloc(2 * N * d * sizeof(float));
	s->E1 = malloc(N * d * sizeof(float));
	s->E2 = malloc(N * d * sizeof(float));
	int ok = s->send && s->gath && s->E1 && s->E2;
	if (cfg->kind == FASTCLIP_OPENCLIP) {
		s->dE1 = malloc(N * d * sizeof(float));
		s->dE2 = malloc(N * d * sizeof(float));
		s->rs_send = malloc(2 * N * d * sizeof(float));
		s->rs_recv = malloc(2 * fe * sizeof(float));
		ok = ok && s->dE1 && s->dE2 && s->rs_send && s->rs_recv;
	} else {
		s->ids_all = malloc(N * sizeof(int64_t));
		s->pack = malloc((size_t)B * s->w * sizeof(float));
		s->pack_all = malloc(N * s->w * sizeof(float));
		ok = ok && s->ids_all && s->pack && s->pack_all;
	}
	if (!ok) {
		fastclip_step_free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

int fastclip_step_run(FastclipStep *s, int epoch, const float *e1, const float *e2, const int64_t *ids,
		      double log_s, FastclipGrads *out)
{
	if (!s || !e1 || !e2 || !out || !out->de1 || !out->de2 || epoch < 0)
		return -EINVAL;
	if (s->cfg.kind != FASTCLIP_OPENCLIP && !ids)
		return -EINVAL;
	const int B = s->B, d = s->d, K = s->K;
	const size_t fe = (size_t)B * d;
	// 1. features of every rank, e1 and e2 in one call, then split into E1, E2 (K·B, d)
	memcpy(s->send, e1, fe * sizeof(float));
	memcpy(s->send + fe, e2, fe * sizeof(float));
	int rc = comm_allgather(s->comm, s->send, s->gath, 2 * fe * sizeof(float));
	if (rc < 0)
		return rc;
	for (int q = 0; q < K; q++) {
		memcpy(s->E1 + q * fe, s->gath + (size_t)q * 2 * fe, fe * sizeof(float));
		memcpy(s->E2 + q * fe, s->gath + (size_t)q * 2 * fe + fe, fe * sizeof(float));
	}
	FastclipBatch b = { .B = B, .K = K, .rank = s->comm->rank, .d = d, .e1 = e1, .e2 = e2,
			    .E1 = s->E1, .E2 = s->E2, .ids = ids, .log_s = log_s };
	if (s->cfg.kind == FASTCLIP_OPENCLIP) {
		double loss, dls;
		if ((rc = fastclip_openclip(&b, &loss, s->dE1, s->dE2, &dls)) < 0)
			return rc;
		// block q of the reduce-scatter input holds rank q's rows of dE1 then dE2
		for (int q = 0; q < K; q++) {
			memcpy(s->rs_send + (size_t)q * 2 * fe, s->dE1 + q * fe, fe * sizeof(float));
			memcpy(s->rs_send + (size_t)q * 2 * fe + fe, s->dE2 + q * fe, fe * sizeof(float));
		}
		if ((rc = comm_reduce_scatter_f32(s->comm, s->rs_send, s->rs_recv, 2 * fe, COMM_SUM)) < 0)
			return rc;
		memcpy(out->de1, s->rs_recv, fe * sizeof(float));
		memcpy(out->de2, s->rs_recv + fe, fe * sizeof(float));
		out->loss = loss;
		out->dlog_s = dls;
		return 0;
	}
	// 2. ids, local phase, packs into every replica
	if ((rc = comm_allgather(s->comm, ids, s->ids_all, (size_t)B * sizeof(int64_t))) < 0)
		return rc;
	if ((rc = fastclip_local(&s->cfg, s->tables, epoch, &b, s->pack)) < 0)
		return rc;
	if ((rc = comm_allgather(s->comm, s->pack, s->pack_all, (size_t)B * s->w * sizeof(float))) < 0)
		return rc;
	if ((rc = fastclip_tables_scatter(s->tables, (int64_t)K * B, s->ids_all, s->pack_all)) < 0)
		return rc;
	// 3. surrogate: purely local backward
	return fastclip_surrogate(&s->cfg, &b, s->pack, s->pack_all, out);
}
