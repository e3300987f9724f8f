// The contract's VideoMAE ops for every backend (tubelet augment, token gather, the decoder's
// input, the normalized-pixel target, the masked MSE, token mean pooling): shapes and dtype classes
// checked, then dispatched.
#include "kern_check.h" // defines: kchk_*, KPRE, KCK, KRUN, kplan

#include <math.h>

#define BE(c) ((c)->dev->be)

// an index row tensor (B, M) I32
static int idx_rows(const KTensor *idx, int64_t B, int64_t *M)
{
	if (!idx || idx->ndim != 2 || idx->shape[0] != B || !kchk_typed(idx, KDT_I32, kern_numel(idx)))
		return 0;
	*M = idx->shape[1];
	return 1;
}

// clips (B, T, H, W, 3) U8 cut into tubelets of tt x p x p: *B, *N tokens; 0 when they do not divide
static int tube_dims(const KTensor *clips, int patch, int tubelet, int64_t *B, int64_t *N)
{
	if (!clips || clips->ndim != 5 || clips->shape[4] != 3 || patch <= 0 || tubelet <= 0)
		return 0;
	const int64_t T = clips->shape[1], H = clips->shape[2], W = clips->shape[3];
	if (T % tubelet || H % patch || W % patch || !kchk_typed(clips, KDT_U8, kern_numel(clips)))
		return 0;
	*B = clips->shape[0];
	*N = (T / tubelet) * (H / patch) * (W / patch);
	return *N <= INT32_MAX;
}

int kern_augment_tubelet(KernCtx *ctx, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip,
			 int patch, int tubelet)
{
	KCK(out);
	KDtype cdt = kchk_cdt(out);
	KPRE(ctx, cdt);
	int64_t B, N;
	KCK(tube_dims(clips, patch, tubelet, &B, &N) && kchk_typed(pos, KDT_I64, B));
	const int64_t K = 3 * (int64_t)tubelet * patch * patch;
	KCK(kchk_act(out, cdt, B * N * K) && out->ndim > 0 && out->shape[out->ndim - 1] == K);
	return KRUN(ctx,
		    kplan("augment_tubelet", 4.0 * kern_numel(out), kplan_t(clips) + kplan_t(out) + kplan_t(pos), 0, 0,
			  "%lldx%lld tt%d p%d", (long long)B, (long long)N, tubelet, patch),
		    BE(ctx)->augment_tubelet(ctx, out, clips, pos, seed, flip, patch, tubelet));
}

// x (B, N, D), idx (B, M), the gathered (B, M, D)
static int gather_dims(const KTensor *x, const KTensor *g, const KTensor *idx, KDtype cdt)
{
	int64_t M;
	if (!x || x->ndim != 3 || !idx_rows(idx, x->shape[0], &M) || x->shape[1] > INT32_MAX)
		return 0;
	return kchk_act(x, cdt, kern_numel(x)) && kchk_act(g, cdt, x->shape[0] * M * x->shape[2]);
}

int kern_token_gather_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KTensor *idx)
{
	KCK(x);
	KDtype cdt = kchk_cdt(x);
	KPRE(ctx, cdt);
	KCK(gather_dims(x, out, idx, cdt) && out->data != x->data);
	return KRUN(ctx,
		    kplan("token_gather_fwd", 0, 2 * kplan_t(out) + kplan_t(idx), 0, 0, "%lldx%lld -> %lld",
			  (long long)x->shape[0], (long long)x->shape[1], (long long)idx->shape[1]),
		    BE(ctx)->token_gather_fwd(ctx, out, x, idx));
}

int kern_token_gather_bwd(KernCtx *ctx, KGrad dx, const KTensor *dout, const KTensor *idx)
{
	KCK(dx.t);
	KDtype cdt = kchk_cdt(dx.t);
	KPRE(ctx, cdt);
	KCK(gather_dims(dx.t, dout, idx, cdt) && dout->data != dx.t->data);
	return KRUN(ctx,
		    kplan("token_gather_bwd", 0, kplan_g(dx) + kplan_t(dout) + kplan_t(idx), 0, 0, "%lldx%lld <- %lld",
			  (long long)dx.t->shape[0], (long long)dx.t->shape[1], (long long)idx->shape[1]),
		    BE(ctx)->token_gather_bwd(ctx, dx, dout, idx));
}

// out (B, Nv + Nm, D) against vis_idx (B, Nv) and mask_idx (B, Nm)
static int dec_dims(const KTensor *out, const KTensor *vis_idx, const KTensor *mask_idx, KDtype cdt, int64_t *Nv,
		    int64_t *D)
{
	int64_t Nm;
	if (!out || out->ndim != 3 || !idx_rows(vis_idx, out->shape[0], Nv) || !idx_rows(mask_idx, out->shape[0], &Nm))
		return 0;
	*D = out->shape[2];
	return *Nv + Nm == out->shape[1] && *D > 0 && kchk_act(out, cdt, kern_numel(out));
}

int kern_mae_decoder_input_fwd(KernCtx *ctx, KTensor *out, const KTensor *x_vis, const KTensor *mask_token,
			       const KTensor *pos, const KTensor *vis_idx, const KTensor *mask_idx)
{
	KCK(x_vis);
	KDtype cdt = kchk_cdt(x_vis);
	KPRE(ctx, cdt);
	int64_t Nv, D;
	KCK(dec_dims(out, vis_idx, mask_idx, cdt, &Nv, &D) && kchk_act(x_vis, cdt, out->shape[0] * Nv * D));
	KCK(kchk_act(mask_token, cdt, D) && pos && pos->ndim == 2 && pos->shape[1] == D && pos->shape[0] <= INT32_MAX &&
	    kchk_act(pos, cdt, kern_numel(pos)));
	return KRUN(ctx,
		    kplan("mae_decoder_input_fwd", (double)kern_numel(out),
			  2 * kplan_t(out) + kplan_t(vis_idx) + kplan_t(mask_idx), 0, 0, "%lldx%lldx%lld",
			  (long long)out->shape[0], (long long)out->shape[1], (long long)D),
		    BE(ctx)->mae_decoder_input_fwd(ctx, out, x_vis, mask_token, pos, vis_idx, mask_idx));
}

int kern_mae_decoder_input_bwd(KernCtx *ctx, KGrad dx_vis, KGrad dmask_token, KGrad dpos, const KTensor *dout,
			       const KTensor *vis_idx, const KTensor *mask_idx)
{
	KCK(dout);
	KDtype cdt = kchk_cdt(dout);
	KPRE(ctx, cdt);
	int64_t Nv, D;
	KCK(dec_dims(dout, vis_idx, mask_idx, cdt, &Nv, &D) && kchk_grad(dx_vis, cdt, dout->shape[0] * Nv * D) &&
	    kchk_grad(dmask_token, cdt, D));
	KCK(!dpos.t || (dpos.t->ndim == 2 && dpos.t->shape[1] == D && dpos.t->shape[0] <= INT32_MAX &&
			kchk_grad(dpos, cdt, kern_numel(dpos.t))));
	return KRUN(ctx,
		    kplan("mae_decoder_input_bwd", (double)kern_numel(dout),
			  kplan_t(dout) + kplan_g(dx_vis) + kplan_g(dmask_token) + kplan_g(dpos), 0, 0,
			  "%lldx%lldx%lld", (long long)dout->shape[0], (long long)dout->shape[1], (long long)D),
		    BE(ctx)->mae_decoder_input_bwd(ctx, dx_vis, dmask_token, dpos, dout, vis_idx, mask_idx));
}

int kern_mae_target(KernCtx *ctx, KTensor *out, const KTensor *clips, const KTensor *pos, const KTensor *mask_idx,
		    uint64_t seed, int flip, int patch, int tubelet)
{
	KPRE(ctx, KDT_F32);
	int64_t B, N, Nm;
	KCK(tube_dims(clips, patch, tubelet, &B, &N) && kchk_typed(pos, KDT_I64, B) && idx_rows(mask_idx, B, &Nm));
	const int64_t K = (int64_t)tubelet * patch * patch;
	KCK(K >= 2 && kchk_typed(out, KDT_F32, B * Nm * K * 3) && out->ndim > 0 && out->shape[out->ndim - 1] == K * 3);
	return KRUN(ctx,
		    kplan("mae_target", 6.0 * kern_numel(out), kplan_t(out) * 1.25 + kplan_t(mask_idx), 0, 0,
			  "%lldx%lld tt%d p%d", (long long)B, (long long)Nm, tubelet, patch),
		    BE(ctx)->mae_target(ctx, out, clips, pos, mask_idx, seed, flip, patch, tubelet));
}

int kern_mae_mse(KernCtx *ctx, KTensor *loss, KGrad dpred, const KTensor *pred, const KTensor *target, double scale)
{
	KCK(pred);
	KDtype cdt = kchk_cdt(pred);
	KPRE(ctx, cdt);
	const int64_t n = kern_numel(pred);
	KCK(n > 0 && kchk_act(pred, cdt, n) && kchk_stat(target, cdt, n) && kchk_grad(dpred, cdt, n));
	KCK((!loss || kchk_stat(loss, cdt, 1)) && isfinite(scale));
	return KRUN(ctx,
		    kplan("mae_mse", 4.0 * n, kplan_t(pred) + kplan_t(target) + kplan_g(dpred) + kplan_t(loss), 0, 0,
			  "%lld", (long long)n),
		    BE(ctx)->mae_mse(ctx, loss, dpred, pred, target, scale));
}

// x or dx (B, L, D) against the pooled (B, D)
static int mean_dims(const KTensor *x, const KTensor *pooled, int first, KDtype cdt)
{
	return x && x->ndim == 3 && first >= 0 && first < x->shape[1] && kchk_act(x, cdt, kern_numel(x)) && pooled &&
	       pooled->ndim == 2 && pooled->shape[0] == x->shape[0] && pooled->shape[1] == x->shape[2] &&
	       kchk_act(pooled, cdt, x->shape[0] * x->shape[2]);
}

int kern_token_mean_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, int first)
{
	KCK(x);
	KDtype cdt = kchk_cdt(x);
	KPRE(ctx, cdt);
	KCK(mean_dims(x, out, first, cdt) && out->data != x->data);
	return KRUN(ctx,
		    kplan("token_mean_fwd", (double)kern_numel(x), kplan_t(x) + kplan_t(out), 0, 0, "%lldx%lldx%lld",
			  (long long)x->shape[0], (long long)x->shape[1], (long long)x->shape[2]),
		    BE(ctx)->token_mean_fwd(ctx, out, x, first));
}

int kern_token_mean_bwd(KernCtx *ctx, KGrad dx, const KTensor *dout, int first)
{
	KCK(dx.t);
	KDtype cdt = kchk_cdt(dx.t);
	KPRE(ctx, cdt);
	KCK(mean_dims(dx.t, dout, first, cdt) && kchk_grad(dx, cdt, kern_numel(dx.t)) && dout->data != dx.t->data);
	return KRUN(ctx,
		    kplan("token_mean_bwd", (double)kern_numel(dx.t), kplan_g(dx) + kplan_t(dout), 0, 0,
			  "%lldx%lldx%lld", (long long)dx.t->shape[0], (long long)dx.t->shape[1],
			  (long long)dx.t->shape[2]),
		    BE(ctx)->token_mean_bwd(ctx, dx, dout, first));
}
