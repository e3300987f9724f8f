// logit_scale is clamped to [0, ln 100] after every step for every loss, as FastCLIP and open_clip
// do: a constant τ below 0.01 (fastclip-v1 --temperature 0.005) trains at 0.01 after one step.
#include <math.h>  // defines: log, fabs
#include <stdio.h> // defines: printf

#include "fastclip.h"          // defines: FASTCLIP_LOG_S_MAX
#include "test_trainer_util.h" // defines: tt_step_config, TtRank

static int run(FastclipKind kind, double tau0)
{
	TrainStepConfig cfg;
	tt_step_config(&cfg, kind, 8, 16);
	cfg.loss.tau_init = tau0;
	TtRank r;
	TrainStepTimes tt;
	float row[TS_NSCALARS];
	// seed 1: fastclip-v3's first step at τ = 0.005 has an infinite gradient norm (and is refused)
	// from most initial weights; this test is about the clamp, not that overflow
	if (tt_rank_open(&r, &cfg, 1) < 0 || tt_rank_step(&r, 0, &tt, row) < 0) {
		printf("FAIL %s: step failed\n", fastclip_kind_name(kind));
		return 1;
	}
	float ls;
	int bad = kern_download(r.ctx, &ls, sizeof ls, &r.ts->model->w.logit_scale) < 0;
	const double log_s = row[TS_LOG_S];
	// τ = 0.005 starts at log s = ln 200 > ln 100: every loss must end the step at ln 100 or below
	bad |= !(log_s <= (float)FASTCLIP_LOG_S_MAX && log_s >= 0.0) || fabs(ls - log_s) > 1e-6;
	if (kind == FASTCLIP_V1 || kind == FASTCLIP_V2) // constant global τ: exactly the clamp
		bad |= log_s != (float)FASTCLIP_LOG_S_MAX;
	printf("%-4s %-12s τ0 %.3f: log s %.6f -> %.6f (ln 100 = %.6f), logit_scale %.6f\n", bad ? "FAIL" : "ok",
	       fastclip_kind_name(kind), tau0, log(1 / tau0), log_s, FASTCLIP_LOG_S_MAX, ls);
	tt_rank_close(&r);
	return bad;
}

int main(void)
{
	int bad = 0;
	for (int k = 0; k < FASTCLIP_NKINDS; k++)
		bad |= run((FastclipKind)k, 0.005);
	printf("%s\n",
	       bad ? "FAIL logit_scale clamp" : "PASS logit_scale clamped to [0, ln 100] after a step for every loss");
	return bad;
}
