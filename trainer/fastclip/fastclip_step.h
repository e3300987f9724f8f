// The data-parallel FastCLIP/OpenCLIP step on features: the exchanges the loss needs (features,
// ids, per-sample packs; OpenCLIP's reduce-scatter) and this rank's loss and feature gradients.
#ifndef TRAINER_FASTCLIP_STEP_H
#define TRAINER_FASTCLIP_STEP_H
// defines: FastclipStep, fastclip_step_create, fastclip_step_run, fastclip_step_free

#include <stdint.h> // defines: int64_t

#include "comm.h"          // defines: Comm
#include "fastclip_loss.h" // defines: FastclipGrads
#include "fastclip_temp.h" // defines: FastclipTemp

typedef struct FastclipStep FastclipStep;

// B: this rank's batch, d: feature width. tables: this rank's full replica (NULL for openclip);
// every rank must use the same cfg, B and d. -EINVAL, -ENOMEM.
int fastclip_step_create(FastclipStep **out, const FastclipConfig *cfg, Comm *comm, FastclipTables *tables,
			 int B, int d);
// One step after the forward pass produced e1, e2 (B, d) for samples ids (B):
//  1. all-gather e1, e2 (without gradient) and, FastCLIP, ids;
//  2. FastCLIP: local phase (g, u, v2's τ) for this rank's anchors, all-gather the packs and
//     write them into every rank's tables;
//  3. surrogate (FastCLIP) or local InfoNCE with gather-with-gradient, whose gathered-copy
//     gradients are reduce-scattered (sum) so out->de1/de2 are dL/de of this rank's features.
// out->dlog_s is this rank's; it belongs with the parameter gradients the caller averages over
// ranks (comm_buckets) before the optimizer and fastclip_temp_step. A comm failure is returned
// as is (comm_error says why).
int fastclip_step_run(FastclipStep *s, int epoch, const float *e1, const float *e2, const int64_t *ids,
		      double log_s, FastclipGrads *out);
void fastclip_step_free(FastclipStep *s);

#endif
