// Checks the gathered InfoNCE op against trainer/fastclip's fastclip_openclip (rank 1 of three:
// loss, the gathered copies' gradients, dlog s), accumulation into existing gradients, and the
// metrics op (local InfoNCE and retrieval accuracy) against a direct computation.
#include "fastclip_ref.h"       // defines: fastclip_openclip
#include "kern_gradcheck.h"     // defines: kgc_*
#include "kern_ops.h"           // defines: kern_infonce, kern_clip_metrics
#include "test_fastclip_util.h" // defines: tf_features, tf_max_rel_f

#include <math.h>
#include <stdio.h>

enum { B = 5, D = 7, K = 3, N = K * B, RANK = 1 };

// symmetric InfoNCE and first-argmax accuracy of the local batch, directly in double
static void metrics_ref(const float *e1, const float *e2, double s, double *nce, double *acc)
{
	double L = 0;
	int hits = 0;
	for (int i = 0; i < B; i++) {
		double row[B], col[B], sr = 0, sc = 0;
		int best = 0;
		for (int j = 0; j < B; j++) {
			row[j] = col[j] = 0;
			for (int k = 0; k < D; k++) {
				row[j] += (double)e1[i * D + k] * e2[j * D + k];
				col[j] += (double)e1[j * D + k] * e2[i * D + k];
			}
			if (row[j] > row[best])
				best = j;
		}
		for (int j = 0; j < B; j++) {
			sr += exp(s * row[j]);
			sc += exp(s * col[j]);
		}
		L += log(sr) - s * row[i] + log(sc) - s * col[i];
		hits += best == i;
	}
	*nce = 0.5 * L / B;
	*acc = (double)hits / B;
}

int main(void)
{
	KernCtx *c;
	if (kern_ctx_create_cpu(&c, 2) || kern_ctx_reserve_workspace(c, kern_loss_ws_bytes(c, B, N, D)))
		return 1;
	uint64_t seed = 5;
	float E1[N * D], E2[N * D], hdE1[N * D], hdE2[N * D], dE1[N * D], dE2[N * D], ld[2];
	tf_features(E1, N, D, &seed);
	tf_features(E2, N, D, &seed);
	const double log_s = (double)(float)log(1 / 0.07);
	FastclipBatch hb = {.B = B,
			    .K = K,
			    .rank = RANK,
			    .d = D,
			    .e1 = E1 + RANK * B * D,
			    .e2 = E2 + RANK * B * D,
			    .E1 = E1,
			    .E2 = E2,
			    .log_s = log_s};
	double hl, hdls;
	if (fastclip_openclip(&hb, &hl, hdE1, hdE2, &hdls) < 0)
		return 1;
	KTensor e1, e2, tE1, tE2, ls, loss, g1, g2, dls, met;
	const int64_t sb[] = {B, D}, sn[] = {N, D}, s1[] = {1}, s2[] = {2};
	if (kern_alloc(c, &e1, KDT_F32, 2, sb) || kern_alloc(c, &e2, KDT_F32, 2, sb) ||
	    kern_alloc(c, &tE1, KDT_F32, 2, sn) || kern_alloc(c, &tE2, KDT_F32, 2, sn) ||
	    kern_alloc(c, &ls, KDT_F32, 1, s1) || kern_alloc(c, &loss, KDT_F32, 1, s1) ||
	    kern_alloc(c, &g1, KDT_F32, 2, sn) || kern_alloc(c, &g2, KDT_F32, 2, sn) ||
	    kern_alloc(c, &dls, KDT_F32, 1, s1) || kern_alloc(c, &met, KDT_F32, 1, s2))
		return 1;
	float lsf = (float)log_s;
	int bad = kern_upload(c, &e1, hb.e1, sizeof(float) * B * D) |
		  kern_upload(c, &e2, hb.e2, sizeof(float) * B * D) | kern_upload(c, &tE1, E1, sizeof E1) |
		  kern_upload(c, &tE2, E2, sizeof E2) | kern_upload(c, &ls, &lsf, 4);
	KContrastBatch b = {.e1 = &e1, .e2 = &e2, .E1 = &tE1, .E2 = &tE2, .offset = RANK * B, .log_s = &ls};
	bad |= kern_infonce(c, &b, &loss, KG_SET(&g1), KG_SET(&g2), KG_SET(&dls));
	bad |= kern_download(c, dE1, sizeof dE1, &g1) | kern_download(c, dE2, sizeof dE2, &g2);
	bad |= kern_download(c, &ld[0], 4, &loss) | kern_download(c, &ld[1], 4, &dls);
	float hlf = (float)hl, hdf = (float)hdls;
	double e[4] = {tf_max_rel_f(&ld[0], &hlf, 1), tf_max_rel_f(dE1, hdE1, N * D), tf_max_rel_f(dE2, hdE2, N * D),
		       tf_max_rel_f(&ld[1], &hdf, 1)};
	int ok = e[0] <= 1e-6 && e[1] <= 1e-6 && e[2] <= 1e-6 && e[3] <= 1e-6;
	printf("%-4s infonce K=%d rank %d vs fastclip_openclip: rel err loss %.2g dE1 %.2g dE2 %.2g dlog_s %.2g\n",
	       ok ? "ok" : "FAIL", K, RANK, e[0], e[1], e[2], e[3]);
	bad |= !ok;
	// KG_ADD adds the same gradient again
	bad |= kern_infonce(c, &b, &loss, KG_ADD(&g1), KG_NONE, KG_ADD(&dls));
	double e2x = 0;
	for (int i = 0; i < N * D; i++)
		e2x = fmax(e2x, fabs(kgc_get(&g1, i) - 2.0f * dE1[i]));
	ok = e2x <= 1e-7 && fabs(kgc_get(&dls, 0) - 2.0f * ld[1]) <= 1e-6 * fabs(ld[1]);
	printf("%-4s KG_ADD accumulates: max |dE1 - 2 dE1| %.2g\n", ok ? "ok" : "FAIL", e2x);
	bad |= !ok;
	// metrics of the local batch, on random pairs and on pairs that mostly match (text = video + noise)
	for (int matched = 0; matched < 2; matched++) {
		float t2[B * D];
		for (int i = 0; i < B * D; i++)
			t2[i] = matched ? hb.e1[i] + 0.4f * hb.e2[i] : hb.e2[i];
		double nce, acc;
		metrics_ref(hb.e1, t2, exp(log_s), &nce, &acc);
		bad |= kern_upload(c, &e2, t2, sizeof t2) | kern_clip_metrics(c, &met, &e1, &e2, &ls);
		ok = fabs(kgc_get(&met, 0) - nce) <= 1e-6 * fabs(nce) && kgc_get(&met, 1) == (float)acc;
		ok &= !matched || acc > 0.5;
		printf("%-4s metrics (%s pairs): nce %.7f (want %.7f) acc %.3f (want %.3f)\n", ok ? "ok" : "FAIL",
		       matched ? "matched" : "random", kgc_get(&met, 0), nce, kgc_get(&met, 1), acc);
		bad |= !ok;
	}
	kern_ctx_destroy(c);
	printf("%s\n", bad ? "FAIL gathered InfoNCE" : "PASS gathered InfoNCE equals fastclip_openclip; metrics");
	return bad;
}
