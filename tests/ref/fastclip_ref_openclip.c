// OpenCLIP's ClipLoss (local loss, gather-with-gradient) on plain buffers: the baseline the
// FastCLIP losses are compared with. Softmax rows are computed in double with max subtraction.
#include "fastclip_ref.h" // defines: FastclipBatch, FastclipGrads, FastclipTables

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <math.h>   // defines: exp, log
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: memset

// one cross-entropy row: anchor a vs all rows of M (n, d), label `label`, logits s·a·M_j.
// Adds the gradient (scaled by wgt) to ga (anchor) and gM (n, d) and returns the row's loss.
static double ce_row(const float *a, const float *M, int n, int d, int label, double s, double wgt, double *logit,
		     double *ga, double *gM, double *dls)
{
	double mx = -INFINITY;
	for (int j = 0; j < n; j++) {
		double z = 0.0;
		const float *mj = M + (size_t)j * d;
		for (int k = 0; k < d; k++)
			z += (double)a[k] * mj[k];
		logit[j] = s * z;
		if (logit[j] > mx)
			mx = logit[j];
	}
	double se = 0.0;
	for (int j = 0; j < n; j++)
		se += exp(logit[j] - mx);
	double lse = mx + log(se);
	for (int j = 0; j < n; j++) {
		double c = (exp(logit[j] - lse) - (j == label)) * wgt; // dloss/dlogit_j
		const float *mj = M + (size_t)j * d;
		double *gj = gM + (size_t)j * d;
		*dls += c * logit[j];
		for (int k = 0; k < d; k++) {
			ga[k] += c * s * mj[k];
			gj[k] += c * s * a[k];
		}
	}
	return (lse - logit[label]) * wgt;
}

int fastclip_openclip(const FastclipBatch *b, double *loss, float *dE1, float *dE2, double *dlog_s)
{
	if (!b || !loss || !dE1 || !dE2 || !dlog_s || b->B < 1 || b->K < 1 || b->d < 1 || b->rank < 0 ||
	    b->rank >= b->K || !b->e1 || !b->e2 || !b->E1 || !b->E2)
		return -EINVAL;
	const int B = b->B, N = b->K * b->B, off = b->rank * b->B, d = b->d;
	const double s = exp(b->log_s), wgt = 0.5 / B;
	double *g1 = calloc((size_t)N * d, sizeof(double)), *g2 = calloc((size_t)N * d, sizeof(double)); // (N, d)
	double *logit = malloc((size_t)N * sizeof(double));                                              // (N)
	if (!g1 || !g2 || !logit) {
		free(g1);
		free(g2);
		free(logit);
		return -ENOMEM;
	}
	double l = 0.0, dls = 0.0;
	for (int i = 0; i < B; i++) {
		// this rank's row off+i of the gathered copy is its own feature: direct terms land there
		l += ce_row(b->e1 + (size_t)i * d, b->E2, N, d, off + i, s, wgt, logit, g1 + (size_t)(off + i) * d, g2,
			    &dls);
		l += ce_row(b->e2 + (size_t)i * d, b->E1, N, d, off + i, s, wgt, logit, g2 + (size_t)(off + i) * d, g1,
			    &dls);
	}
	for (size_t k = 0; k < (size_t)N * d; k++) {
		dE1[k] = (float)g1[k];
		dE2[k] = (float)g2[k];
	}
	*loss = l;
	*dlog_s = dls;
	free(g1);
	free(g2);
	free(logit);
	return 0;
}
