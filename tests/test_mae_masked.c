// The masked autoencoder's encoder runs on the visible tokens only: its block outputs and its
// ln_post of the class token equal those of the plain video tower (clip_model_forward_visual) run on
// a clip from which the masked tubelets were removed by hand — the visible patches alone, each with
// its own spatial + temporal position folded into the tower's position table. In f64, to 1e-12; a
// wrong position in the hand-made clip is seen (the comparison can fail).
#include "kern_gradcheck.h" // defines: kgc_fill
#include "model.h"          // defines: MaeModel, ClipModel, ...

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3 };

static const ParamSpec *spec(const ParamSpec *s, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	return NULL;
}

static double maxrel(const double *a, const double *b, int64_t n)
{
	double d = 0, s = 0;
	for (int64_t i = 0; i < n; i++) {
		d = fmax(d, fabs(a[i] - b[i]));
		s = fmax(s, fabs(b[i]));
	}
	return d / fmax(s, 1e-300);
}

// clip b of the MAE batch as its own tower on the visible tokens: 1 slice of Nv patches
// (image 2p: 4 patches), positions folded in; wrong != 0 gives token 0 its neighbour's position.
// Returns the worst relative difference of the block outputs and of ln_post's class token.
static double by_hand(KernCtx *c, MaeModel *m, ClipModel *t, int b, int wrong, double *dcls)
{
	const MaeTokens *tk = &m->tok;
	const int W = m->cfg.vis_width, Le = 1 + tk->Nv, L = m->cfg.vis_layers;
	const double *mp = m->params.data;
	double *tp = t->params.data;
	for (int i = 0; i < t->n_specs; i++) { // every encoder tensor of the same shape, by name
		const ParamSpec *s = &t->specs[i], *ms = spec(m->specs, m->n_specs, s->name);
		if (ms && ms->numel == s->numel)
			memcpy(tp + s->offset, mp + ms->offset, sizeof(double) * (size_t)s->numel);
	}
	const ParamSpec *pos = spec(m->specs, m->n_specs, "visual.positional_embedding"),
			*tpos = spec(m->specs, m->n_specs, "visual.temporal_embedding"),
			*pos2 = spec(t->specs, t->n_specs, "visual.positional_embedding"),
			*tpos2 = spec(t->specs, t->n_specs, "visual.temporal_embedding");
	const int32_t *enc = m->host_idx + (size_t)b * Le; // [0, 1 + n of each visible token]
	double *patches = t->patches.data;
	const double *mpatch = (const double *)m->patches.data + (size_t)b * tk->N * m->K3;
	memcpy(tp + pos2->offset, mp + pos->offset, sizeof(double) * (size_t)W); // the class token's
	memset(tp + tpos2->offset, 0, sizeof(double) * (size_t)W);
	for (int j = 0; j < tk->Nv; j++) {
		const int n = enc[1 + j] - 1, q = (wrong && j == 0 ? n + 1 : n) % tk->Ns, s = n / tk->Ns;
		for (int d = 0; d < W; d++)
			tp[pos2->offset + (int64_t)(1 + j) * W + d] =
				mp[pos->offset + (int64_t)(1 + q) * W + d] + mp[tpos->offset + (int64_t)s * W + d];
		memcpy(patches + (size_t)j * m->K3, mpatch + (size_t)n * m->K3, sizeof(double) * (size_t)m->K3);
	}
	if (clip_model_forward_visual(t, &t->patches) || kern_sync(c))
		return INFINITY;
	const double *mine = (const double *)m->eacts[L - 1].res2.data + (size_t)b * Le * W;
	*dcls = maxrel(t->vln.data, (const double *)m->enc.data + (size_t)b * Le * W, W);
	return maxrel(t->vacts[L - 1].res2.data, mine, (int64_t)Le * W);
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 1))
		return 1;
	ModelConfig cfg, one;
	MaeConfig mc;
	model_config_preset(&cfg, "tiny");
	mae_config_preset(&mc, &cfg, "tiny"); // 4 frames, tubelets of 2: two slices of 16 patches
	mc.mask_ratio = 0.9;                  // 14 of 16 masked: 2 visible per slice, 4 per clip
	one = cfg;
	one.image_size = 2 * cfg.patch, one.frames = cfg.tubelet; // one slice of 4 patches
	one.pool = MODEL_POOL_CLS; // its vln is ln_post of the class token, the mae encoder's row 0
	MaeModel *m;
	ClipModel *t;
	ClipModelOpts vo = {.vision_only = 1};
	if (mae_model_create(&m, c, &cfg, &mc, B, KDT_F64, NULL) || mae_init_params(c, &cfg, &mc, &m->params, 3) ||
	    clip_model_create_opts(&t, c, &one, 1, KDT_F64, &vo) || model_init_params(c, &one, &t->params, 4)) {
		printf("FAIL setup\n");
		return 1;
	}
	if (m->tok.Nv != (one.image_size / one.patch) * (one.image_size / one.patch)) {
		printf("FAIL the test's geometry: %d visible tokens, the hand-made clip has 4\n", m->tok.Nv);
		return 1;
	}
	KTensor noise, clips, pos; // the temporal embedding starts at zero: perturb it with the rest
	kern_alloc(c, &noise, KDT_F64, 1, &m->n_params);
	kgc_fill(&noise, 5, 0.05);
	kern_add(c, &m->params, &m->params, &noise);
	kern_free(c, &noise);
	const int64_t sc[] = {B, cfg.frames, cfg.image_size, cfg.image_size, 3}, sp[] = {B}, g[B] = {3, 1000, 77};
	kern_alloc(c, &clips, KDT_U8, 5, sc);
	kern_alloc(c, &pos, KDT_I64, 1, sp);
	uint8_t *px = clips.data;
	for (int64_t i = 0; i < kern_numel(&clips); i++)
		px[i] = (uint8_t)((i * 2654435761u) >> 11);
	memcpy(pos.data, g, sizeof g);
	if (mae_model_set_masks(m, g, 21) || mae_model_forward(m, &clips, &pos, 21, 1, 1.0) || kern_sync(c)) {
		printf("FAIL the masked forward: %s\n", kern_error_message(c));
		return 1;
	}
	int bad = 0;
	for (int b = 0; b < B; b++) {
		double dcls, dw;
		const double d = by_hand(c, m, t, b, 0, &dcls), wrong = by_hand(c, m, t, b, 1, &dw);
		const int ok = d < 1e-12 && dcls < 1e-12 && wrong > 1e-6;
		printf("%s clip %d: blocks' output %.2e, ln_post class token %.2e from the hand-made clip; a wrong position: "
		       "%.2e\n",
		       ok ? "ok  " : "FAIL", b, d, dcls, wrong);
		bad |= !ok;
	}
	mae_model_destroy(m);
	clip_model_destroy(t);
	kern_free(c, &clips);
	kern_free(c, &pos);
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL masked encoder vs the tower on the visible tokens"
			   : "PASS masked encoder equals the tower on the visible tokens alone");
	return bad;
}
