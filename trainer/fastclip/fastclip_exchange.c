// The loss of one data-parallel step on device buffers: the FastCLIP exchange (features and ids
// all-gathered without gradient in one group of collectives, local phase, packs all-gathered into every replica, surrogate)
// and OpenCLIP's gather-with-gradient, as queued loss ops and data-plane collectives only.
#include "fastclip.h" // defines: FastclipExchange, ...
#include "errbuf.h"   // defines: TRY

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdlib.h> // defines: calloc, free

struct FastclipExchange {
	FastclipConfig cfg;
	Comm *comm;
	KernCtx *ctx;
	int B, d, K;
	KTensor E1, E2;         // (K·B, d) act: every rank's features
	KTensor de1, de2;       // (B, d) f32: this rank's feature gradients
	KTensor dE1, dE2;       // (K·B, d) f32 openclip: gradients of the gathered copies
	KTensor ids_all;        // (K·B) i64
	KTensor pack, pack_all; // (B, w), (K·B, w) f32
	KTensor table;          // (n, table width) f32
};

void fastclip_exchange_free(FastclipExchange *x)
{
	if (!x)
		return;
	KTensor *t[] = {&x->E1,  &x->E2,      &x->de1,  &x->de2,      &x->dE1,
			&x->dE2, &x->ids_all, &x->pack, &x->pack_all, &x->table};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		kern_free(x->ctx, t[i]);
	free(x);
}

// u at 0; v2's τ columns at the initial τ, its bounds and moments at 0
static int table_init(FastclipExchange *x, int64_t n)
{
	const int tw = kern_fcco_table_width(fastclip_fcco_params(&x->cfg, 0).version);
	TRY(kern_alloc(x->ctx, &x->table, KDT_F32, 2, (const int64_t[]){n, tw}));
	if (x->cfg.kind != FASTCLIP_V2)
		return 0;
	float *host = calloc((size_t)(n * tw), sizeof(float));
	if (!host)
		return -ENOMEM;
	for (int64_t i = 0; i < n; i++)
		host[i * tw + KFCCO_T_TAU1] = host[i * tw + KFCCO_T_TAU2] = (float)x->cfg.tau_init;
	int rc = kern_upload(x->ctx, &x->table, host, kern_nbytes(&x->table));
	free(host);
	return rc;
}

static int create(FastclipExchange *x, KDtype act, int64_t n)
{
	const int64_t B = x->B, d = x->d, N = (int64_t)x->K * x->B;
	KernCtx *c = x->ctx;
	TRY(kern_alloc(c, &x->E1, act, 2, (const int64_t[]){N, d}));
	TRY(kern_alloc(c, &x->E2, act, 2, (const int64_t[]){N, d}));
	TRY(kern_alloc(c, &x->de1, KDT_F32, 2, (const int64_t[]){B, d}));
	TRY(kern_alloc(c, &x->de2, KDT_F32, 2, (const int64_t[]){B, d}));
	if (x->cfg.kind == FASTCLIP_OPENCLIP) {
		TRY(kern_alloc(c, &x->dE1, KDT_F32, 2, (const int64_t[]){N, d}));
		TRY(kern_alloc(c, &x->dE2, KDT_F32, 2, (const int64_t[]){N, d}));
	} else {
		const int64_t w = fastclip_pack_width(x->cfg.kind);
		TRY(kern_alloc(c, &x->ids_all, KDT_I64, 1, &N));
		TRY(kern_alloc(c, &x->pack, KDT_F32, 2, (const int64_t[]){B, w}));
		TRY(kern_alloc(c, &x->pack_all, KDT_F32, 2, (const int64_t[]){N, w}));
		TRY(table_init(x, n));
	}
	return kern_ctx_reserve_workspace(c, kern_loss_ws_bytes(c, x->B, (int)N, x->d));
}

int fastclip_exchange_create(FastclipExchange **out, const FastclipConfig *cfg, Comm *comm, KernCtx *ctx, int B, int d,
			     KDtype act, int64_t n)
{
	if (!out || !cfg || !comm || !ctx || B < 1 || d < 1 || fastclip_config_check(cfg) < 0 ||
	    (act != KDT_F32 && act != KDT_BF16) || (int64_t)comm_world(comm) * B < 2 ||
	    (cfg->kind != FASTCLIP_OPENCLIP && n < 1))
		return -EINVAL;
	FastclipExchange *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->cfg = *cfg;
	x->comm = comm;
	x->ctx = ctx;
	x->B = B;
	x->d = d;
	x->K = comm_world(comm);
	int rc = create(x, act, n);
	if (rc < 0) {
		fastclip_exchange_free(x);
		return rc;
	}
	*out = x;
	return 0;
}

// the collectives from comm_group_start to here, issued as one group (comm.h GROUPS); rc: the
// first failure of a call inside it (the group is closed anyway, so comm stays usable)
static int group_end(FastclipExchange *x, int rc)
{
	int re = comm_group_end(x->comm);
	return rc ? rc : re;
}

static int openclip(FastclipExchange *x, KernCtx *s, const KContrastBatch *b, KTensor *loss, KTensor *dlog_s)
{
	TRY(kern_infonce(s, b, loss, KG_SET(&x->dE1), KG_SET(&x->dE2), KG_SET(dlog_s)));
	// rank q's rows of every rank's dE sum into rank q's dL/de
	TRY(comm_group_start(x->comm));
	int rc = comm_reduce_scatter(x->comm, &x->dE1, &x->de1, COMM_SUM, s);
	if (!rc)
		rc = comm_reduce_scatter(x->comm, &x->dE2, &x->de2, COMM_SUM, s);
	return group_end(x, rc);
}

int fastclip_exchange_run(FastclipExchange *x, KernCtx *stream, const KTensor *e1, const KTensor *e2,
			  const KTensor *ids, const KTensor *log_s, int epoch, KTensor *loss, KTensor *dlog_s)
{
	if (!x || !stream || !e1 || !e2 || !log_s || !loss || !dlog_s || epoch < 0 ||
	    (x->cfg.kind != FASTCLIP_OPENCLIP && !ids))
		return -EINVAL;
	// features and ids in one group: NCCL launches them as one. The u pack cannot join it: the local
	// phase that computes it reads the gathered features.
	const int fcco = x->cfg.kind != FASTCLIP_OPENCLIP;
	TRY(comm_group_start(x->comm));
	int rc = comm_allgather(x->comm, e1, &x->E1, stream);
	if (!rc)
		rc = comm_allgather(x->comm, e2, &x->E2, stream);
	if (!rc && fcco)
		rc = comm_allgather(x->comm, ids, &x->ids_all, stream);
	TRY(group_end(x, rc));
	KContrastBatch b = {
		.e1 = e1, .e2 = e2, .E1 = &x->E1, .E2 = &x->E2, .offset = comm_rank(x->comm) * x->B, .log_s = log_s};
	if (!fcco)
		return openclip(x, stream, &b, loss, dlog_s);
	const KFccoParams p = fastclip_fcco_params(&x->cfg, epoch);
	TRY(kern_fcco_local(stream, &b, ids, &x->table, &p, &x->pack));
	TRY(comm_allgather(x->comm, &x->pack, &x->pack_all, stream));
	TRY(kern_fcco_scatter(stream, &x->table, &x->ids_all, &x->pack_all, p.version));
	return kern_fcco_surrogate(stream, &b, &x->pack, &x->pack_all, &p, loss, KG_SET(&x->de1), KG_SET(&x->de2),
				   KG_SET(dlog_s));
}

const KTensor *fastclip_exchange_de1(const FastclipExchange *x)
{
	return &x->de1;
}

const KTensor *fastclip_exchange_de2(const FastclipExchange *x)
{
	return &x->de2;
}

KTensor *fastclip_exchange_table(FastclipExchange *x)
{
	return x->cfg.kind == FASTCLIP_OPENCLIP ? NULL : &x->table;
}
