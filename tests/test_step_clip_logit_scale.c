// Gradient-norm clipping covers logit_scale as in FastCLIP (clip_grad_norm_ over
// model.parameters()): when τ is learned (v0, v3) its gradient is part of the norm and scaled by
// the clip; when it is not (v1, v2; requires_grad False upstream) it is not in the norm.
#include <math.h>   // defines: sqrt, fabs
#include <stdio.h>  // defines: printf
#include <stdlib.h> // defines: malloc, free

#include "test_trainer_util.h" // defines: tt_step_config, TtRank

static int run(FastclipKind kind)
{
	TrainStepConfig cfg;
	tt_step_config(&cfg, kind, 8, 16);
	cfg.opt.clip_norm = 1e-3; // always clips
	TtRank r;
	TrainStepTimes tt;
	float row[TS_NSCALARS];
	// the optimizer reads the rank-averaged gradients and leaves them in place: after the step they
	// are the ones its norm was taken over
	if (tt_rank_open(&r, &cfg, 5) < 0 || tt_rank_step(&r, 0, &tt, row) < 0) {
		printf("FAIL %s: step failed\n", fastclip_kind_name(kind));
		return 1;
	}
	ClipModel *m = r.ts->model;
	int64_t n = m->n_params, ls_at = n - 1; // logit_scale is the table's last entry
	float *g = malloc(sizeof(float) * (size_t)n);
	if (!g || kern_download(r.ctx, g, sizeof(float) * (size_t)n, &m->grads) < 0 ||
	    m->specs[m->n_specs - 1].offset != ls_at)
		return 1;
	double ss = 0;
	for (int64_t i = 0; i < ls_at; i++)
		ss += (double)g[i] * g[i];
	const int learned = kind == FASTCLIP_V0 || kind == FASTCLIP_V3;
	double dls = g[ls_at], want = sqrt(ss + (learned ? dls * dls : 0.0));
	free(g);
	// the device keeps the norm in f32; the sum runs in chunks in double, so 1e-6 relative
	int bad = fabs(row[TS_GRAD_NORM] - want) > 1e-6 * want || (learned && !(dls != 0.0)) || !(row[TS_CLIP] < 1.0f);
	printf("%-4s %-12s grad norm %.9g, want %.9g, clip factor %.3g (dL/dlog s %.3g %s)\n", bad ? "FAIL" : "ok",
	       fastclip_kind_name(kind), row[TS_GRAD_NORM], want, row[TS_CLIP], dls,
	       learned ? "in the norm" : "not in it");
	tt_rank_close(&r);
	return bad;
}

int main(void)
{
	int bad = 0;
	for (int k = FASTCLIP_V0; k < FASTCLIP_NKINDS; k++)
		bad |= run((FastclipKind)k);
	printf("%s\n",
	       bad ? "FAIL clipping and logit_scale" : "PASS the clipped gradient norm covers a learned logit_scale");
	return bad;
}
