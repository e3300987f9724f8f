// FastCLIP per-sample state: the u1/u2 estimators (and v2's per-sample τ, bounds, Adam moments),
// a full replica on every rank indexed by manifest sample id, and the layout of the per-sample pack.
#ifndef TRAINER_FASTCLIP_TABLES_H
#define TRAINER_FASTCLIP_TABLES_H
// defines: FastclipTables, FastclipPackField, fastclip_tables_create, fastclip_tables_free,
//          fastclip_tables_scatter, fastclip_u_is_bad

#include <stdbool.h>
#include <stdint.h> // defines: int64_t

#include "fastclip_config.h" // defines: FastclipConfig, FastclipKind

// order of the floats one sample contributes to the all-gathered pack (FastCLIP's gather_list)
typedef enum {
	FASTCLIP_P_U1 = 0, FASTCLIP_P_U2,         // updated u (all FastCLIP kinds)
	FASTCLIP_P_TAU1, FASTCLIP_P_TAU2,         // v2: updated τ
	FASTCLIP_P_B1, FASTCLIP_P_B2,             // v2: updated log-sum-exp bounds
	FASTCLIP_P_TAU1_OLD, FASTCLIP_P_TAU2_OLD, // v2: τ this step's loss used
	FASTCLIP_P_M1, FASTCLIP_P_M2,             // v2: τ Adam first moments
	FASTCLIP_P_V1, FASTCLIP_P_V2,             // v2: τ Adam second moments
} FastclipPackField;

typedef struct {
	FastclipKind kind;
	int64_t n;               // dataset size (manifest samples)
	float *u1, *u2;          // (n) video-anchor / text-anchor estimators, start at 0
	float *tau1, *tau2;      // (n) v2 only: per-sample τ, start at tau_init
	float *bound1, *bound2;  // (n) v2 only: running max of the scaled logit gap, start at 0
	float *m1, *m2, *v1, *v2; // (n) v2 only: Adam moments of the τ update, start at 0
} FastclipTables;

// allocates the tables for n samples; -EINVAL on bad arguments, -ENOMEM
int fastclip_tables_create(FastclipTables *t, const FastclipConfig *cfg, int64_t n);
void fastclip_tables_free(FastclipTables *t);
// writes count packs (count, width) into the rows named by ids; -ERANGE when an id is outside [0, n)
int fastclip_tables_scatter(FastclipTables *t, int64_t count, const int64_t *ids, const float *packs);
// FastCLIP's reset rule: a u below 1e-35 (including 0 and negatives), infinite or NaN is replaced by g
bool fastclip_u_is_bad(float u);

#endif
