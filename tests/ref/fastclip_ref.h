// The host twin of the FastCLIP/OpenCLIP loss ops (tests only): the per-sample tables, the local
// phase, the surrogate, OpenCLIP's InfoNCE and the temperature's Adam step on plain host buffers,
// in double, in the order of additions the kernels' CPU twins reproduce to the bit.
#ifndef TESTS_REF_FASTCLIP_REF_H
#define TESTS_REF_FASTCLIP_REF_H
// defines: FastclipTables, FastclipPackField, fastclip_tables_create, fastclip_tables_free,
//          fastclip_tables_scatter, fastclip_u_is_bad, FastclipBatch, FastclipGrads, fastclip_local,
//          fastclip_surrogate, fastclip_openclip, FastclipTemp, fastclip_temp_init, fastclip_temp_step,
//          fastclip_clamp_log_s

#include <stdbool.h>
#include <stdint.h> // defines: int64_t

#include "fastclip.h" // defines: FastclipConfig, FastclipKind, FASTCLIP_LOG_S_MAX

// ---- per-sample tables ----
// order of the floats one sample contributes to the all-gathered pack (FastCLIP's gather_list)
typedef enum {
	FASTCLIP_P_U1 = 0,
	FASTCLIP_P_U2, // updated u (all FastCLIP kinds)
	FASTCLIP_P_TAU1,
	FASTCLIP_P_TAU2, // v2: updated τ
	FASTCLIP_P_B1,
	FASTCLIP_P_B2, // v2: updated log-sum-exp bounds
	FASTCLIP_P_TAU1_OLD,
	FASTCLIP_P_TAU2_OLD, // v2: τ this step's loss used
	FASTCLIP_P_M1,
	FASTCLIP_P_M2, // v2: τ Adam first moments
	FASTCLIP_P_V1,
	FASTCLIP_P_V2, // v2: τ Adam second moments
} FastclipPackField;

typedef struct {
	FastclipKind kind;
	int64_t n;                // dataset size (manifest samples)
	float *u1, *u2;           // (n) video-anchor / text-anchor estimators, start at 0
	float *tau1, *tau2;       // (n) v2 only: per-sample τ, start at tau_init
	float *bound1, *bound2;   // (n) v2 only: running max of the scaled logit gap, start at 0
	float *m1, *m2, *v1, *v2; // (n) v2 only: Adam moments of the τ update, start at 0
} FastclipTables;

// allocates the tables for n samples; -EINVAL on bad arguments, -ENOMEM
int fastclip_tables_create(FastclipTables *t, const FastclipConfig *cfg, int64_t n);
void fastclip_tables_free(FastclipTables *t);
// writes count packs (count, width) into the rows named by ids; -ERANGE when an id is outside [0, n)
int fastclip_tables_scatter(FastclipTables *t, int64_t count, const int64_t *ids, const float *packs);
// FastCLIP's reset rule: a u below 1e-35 (including 0 and negatives), infinite or NaN is replaced by g
bool fastclip_u_is_bad(float u);

// ---- the loss pieces ----
// One rank's view of a step. N = K·B; this rank's rows are rows [rank·B, rank·B + B) of E1/E2.
typedef struct {
	int B, K, rank, d;
	const float *e1, *e2; // (B, d) this rank's video / text features (L2-normalized)
	const float *E1, *E2; // (K·B, d) all ranks' features, gathered without gradient
	const int64_t *ids;   // (B) manifest ids of this rank's samples
	double log_s;         // global log(1/τ) (openclip, v0, v1, v3)
} FastclipBatch;

typedef struct {
	double loss;      // value of this rank's surrogate (openclip: its local InfoNCE)
	float *de1, *de2; // (B, d) dL/de1, dL/de2 of this rank's surrogate (caller-owned)
	double dlog_s;    // dL/d(log s); 0 where τ is not a model parameter (v1, v2)
} FastclipGrads;

// Local phase: for this rank's anchors vs the gathered batch computes g1, g2, the updated u
// (FastCLIP's reset rule, γ of the epoch) and for v2 the updated per-sample τ; writes them to
// pack (B, fastclip_pack_width). Reads the tables, does not write them (the step scatters the
// gathered packs into every replica). -EINVAL on bad arguments or N < 2, -ERANGE on a bad id.
int fastclip_local(const FastclipConfig *cfg, const FastclipTables *t, int epoch, const FastclipBatch *b, float *pack);

// Surrogate loss and its gradient w.r.t. this rank's features (and log s). pack_local (B, w) is
// this rank's pack; pack_all (K·B, w) the gathered one. Averaging the parameter gradients over
// the K ranks gives the single-rank gradient of the concatenated batch. Kinds v0..v3 only.
int fastclip_surrogate(const FastclipConfig *cfg, const FastclipBatch *b, const float *pack_local,
		       const float *pack_all, FastclipGrads *out);

// OpenCLIP ClipLoss with local loss and gather-with-gradient: loss = ½(CE(s·e1·E2ᵀ) + CE(s·e2·E1ᵀ))
// over this rank's B rows. dE1, dE2 (K·B, d): gradient w.r.t. the gathered copies, this rank's
// direct terms added on its own rows; a sum reduce-scatter over ranks gives dL/de of each rank.
int fastclip_openclip(const FastclipBatch *b, double *loss, float *dE1, float *dE2, double *dlog_s);

// ---- the global temperature ----
typedef struct {
	double log_s;  // log(1/τ)
	double m, v;   // Adam moments
	int64_t steps; // Adam step count (bias correction)
} FastclipTemp;

// -EINVAL unless tau > 0
int fastclip_temp_init(FastclipTemp *t, double tau);
// one Adam step on log s with gradient grad (already averaged over ranks) and rate lr, then the
// clamp; -EINVAL on a bad argument or a non-finite gradient (state unchanged)
int fastclip_temp_step(FastclipTemp *t, double grad, double lr, double beta1, double beta2, double eps);
double fastclip_clamp_log_s(double log_s);

#endif
