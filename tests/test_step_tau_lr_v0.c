// FastCLIP-v0's temperature learns at the model's rate on the model's warmup+cosine schedule
// (FastCLIP main.py: --lr_tau < 0 is the model's lr, the logit_scale group follows cosine_lr), or
// at --lr-tau on the same schedule when given. Checked on the rate and on the first Adam move,
// which for one step is lr·g/(|g|+ε) ≈ lr.
#include <math.h>  // defines: fabs
#include <stdio.h> // defines: printf

#include "test_trainer_util.h" // defines: tt_step_config, TtRank

static int run(double lr_tau, int64_t warmup, double want)
{
	TrainStepConfig cfg;
	tt_step_config(&cfg, FASTCLIP_V0, 8, 16);
	cfg.opt.lr = 0.03;
	cfg.opt.warmup_steps = warmup;
	cfg.opt.total_steps = 50;
	cfg.loss.lr_tau = lr_tau;
	TtRank r;
	TrainStepTimes tt;
	float row[TS_NSCALARS], before;
	if (tt_rank_open(&r, &cfg, 3) < 0 || kern_download(r.ctx, &before, sizeof before, &r.ts->model->log_s) < 0 ||
	    tt_rank_step(&r, 0, &tt, row) < 0) {
		printf("FAIL step failed\n");
		return 1;
	}
	double moved = fabs((double)row[TS_LOG_S] - before);
	// the move is computed and stored in f32: a relative tolerance of 1e-3 of lr covers its rounding
	int bad = fabs(tt.lr_tau - want) > 1e-12 * want || fabs(moved - want) > 1e-3 * want;
	printf("%-4s --lr-tau %-5g warmup %lld: τ rate %.6g (want %.6g), log s moved %.6g\n", bad ? "FAIL" : "ok",
	       lr_tau, (long long)warmup, tt.lr_tau, want, moved);
	tt_rank_close(&r);
	return bad;
}

int main(void)
{
	int bad = 0;
	bad |= run(-1.0, 0, 0.03);       // default: the model's peak rate
	bad |= run(-1.0, 10, 0.03 / 10); // and its warmup
	bad |= run(0.004, 4, 0.004 / 4); // --lr-tau: its own peak on the same schedule
	printf("%s\n", bad ? "FAIL v0 τ rate" : "PASS v0 τ rate follows the model's schedule (peak --lr-tau or --lr)");
	return bad;
}
