// FastCLIP losses on plain feature buffers: the local phase (g, u update, v2's τ update) and the
// surrogate whose gradient is the FCCO estimator, plus the OpenCLIP InfoNCE baseline.
#ifndef TRAINER_FASTCLIP_LOSS_H
#define TRAINER_FASTCLIP_LOSS_H
// defines: FastclipBatch, FastclipGrads, fastclip_local, fastclip_surrogate, fastclip_openclip

#include <stdint.h> // defines: int64_t

#include "fastclip_config.h" // defines: FastclipConfig
#include "fastclip_tables.h" // defines: FastclipTables

// One rank's view of a step. N = K·B; this rank's rows are rows [rank·B, rank·B + B) of E1/E2.
typedef struct {
	int B, K, rank, d;
	const float *e1, *e2; // (B, d) this rank's video / text features (L2-normalized)
	const float *E1, *E2; // (K·B, d) all ranks' features, gathered without gradient
	const int64_t *ids;   // (B) manifest ids of this rank's samples
	double log_s;         // global log(1/τ) (openclip, v0, v1, v3)
} FastclipBatch;

typedef struct {
	double loss;          // value of this rank's surrogate (openclip: its local InfoNCE)
	float *de1, *de2;     // (B, d) dL/de1, dL/de2 of this rank's surrogate (caller-owned)
	double dlog_s;        // dL/d(log s); 0 where τ is not a model parameter (v1, v2)
} FastclipGrads;

// Local phase: for this rank's anchors vs the gathered batch computes g1, g2, the updated u
// (FastCLIP's reset rule, γ of the epoch) and for v2 the updated per-sample τ; writes them to
// pack (B, fastclip_pack_width). Reads the tables, does not write them (the step scatters the
// gathered packs into every replica). -EINVAL on bad arguments or N < 2, -ERANGE on a bad id.
int fastclip_local(const FastclipConfig *cfg, const FastclipTables *t, int epoch,
		   const FastclipBatch *b, float *pack);

// Surrogate loss and its gradient w.r.t. this rank's features (and log s). pack_local (B, w) is
// this rank's pack; pack_all (K·B, w) the gathered one. Averaging the parameter gradients over
// the K ranks gives the single-rank gradient of the concatenated batch. Kinds v0..v3 only.
int fastclip_surrogate(const FastclipConfig *cfg, const FastclipBatch *b, const float *pack_local,
		       const float *pack_all, FastclipGrads *out);

// OpenCLIP ClipLoss with local loss and gather-with-gradient: loss = ½(CE(s·e1·E2ᵀ) + CE(s·e2·E1ᵀ))
// over this rank's B rows. dE1, dE2 (K·B, d): gradient w.r.t. the gathered copies, this rank's
// direct terms added on its own rows; a sum reduce-scatter over ranks gives dL/de of each rank.
int fastclip_openclip(const FastclipBatch *b, double *loss, float *dE1, float *dE2, double *dlog_s);

#endif
