// The logged scalars' read-back one interval late (trainer_step.h): a step writes one of two
// metrics blocks; a full block is handed to the host while the steps fill the other, the oldest is
// taken first, a step into a full block or one still on its way is refused (-ENOSPC, -EBUSY), and
// the rows and the phases' device times (timed events) come back in step order, the scalars equal
// to a synchronous read-back's.
#include <errno.h> // defines: EBUSY, ENOSPC
#include <math.h>  // defines: isfinite
#include <stdio.h> // defines: printf

#include "test_trainer_util.h" // defines: tt_step_config, TtRank, tt_rank_open, tt_upload

enum { STEPS = 6, EVERY = 2 };

static int bad;

static void expect(const char *what, long long got, long long want)
{
	printf("%-4s %-64s %lld (want %lld)\n", got == want ? "ok" : "FAIL", what, got, want);
	bad |= got != want;
}

// after a full block: the lagged read-back hands it over and takes the one before, if any
static int lagged(TtRank *r, float (*rows)[TS_NSCALARS], double (*ph)[TS_NPHASES], int got)
{
	TrainStepTimes tt;
	int n = 0, blk = -1;
	expect("a full block refuses another step", train_step_run(r->ts, 0, &tt), -ENOSPC);
	expect("hand it over", train_step_fetch_begin(r->ts), 0);
	expect("... landed (the CPU backend's copy is done when queued)", train_step_fetch_ready(r->ts), 1);
	if (train_step_fetch_pending(r->ts) < 2)
		return 0;
	expect("a step into the block still on its way", train_step_run(r->ts, 0, &tt), -EBUSY);
	expect("take the oldest", train_step_fetch_end(r->ts, rows[got], ph[got], &n, &blk), 0);
	expect("... the block the next steps write", blk, r->ts->blk);
	return n;
}

// STEPS steps, read back one interval late (lag 1) or at once; the rows read
static int run(int lag, float (*rows)[TS_NSCALARS], double (*ph)[TS_NPHASES])
{
	TrainStepConfig cfg;
	tt_step_config(&cfg, FASTCLIP_V3, 4, 32);
	cfg.log_every = EVERY;
	TtRank r;
	TrainStepTimes tt;
	if (tt_rank_open(&r, &cfg, 5) < 0)
		return -1;
	int got = 0, n, blk;
	for (int s = 0; s < STEPS; s++) {
		if (tt_upload(r.ts, 5, s, 0) < 0 || train_step_run(r.ts, 0, &tt) < 0)
			return -1;
		if (r.ts->rows < EVERY)
			continue;
		if (!lag && train_step_read_metrics(r.ts, rows[got], &n) == 0)
			got += n;
		else if (lag)
			got += lagged(&r, rows, ph, got);
	}
	expect("hand over what is left (nothing)", train_step_fetch_begin(r.ts), 0);
	while (train_step_fetch_pending(r.ts) && !train_step_fetch_end(r.ts, rows[got], ph[got], &n, &blk))
		got += n;
	expect("nothing left on its way", train_step_fetch_pending(r.ts), 0);
	expect("... so nothing has landed", train_step_fetch_ready(r.ts), 0);
	tt_rank_close(&r);
	return got;
}

int main(void)
{
	float a[STEPS][TS_NSCALARS], b[STEPS][TS_NSCALARS];
	double pa[STEPS][TS_NPHASES], pb[STEPS][TS_NPHASES];
	const int na = run(1, a, pa), nb = run(0, b, pb);
	expect("rows read back one interval late", na, STEPS);
	expect("rows read back at once", nb, STEPS);
	int same = na == STEPS && nb == STEPS, timed = same;
	for (int i = 0; same && i < STEPS; i++)
		for (int k = 0; k < TS_NSCALARS; k++)
			same &= a[i][k] == b[i][k];
	for (int i = 0; timed && i < STEPS; i++)
		for (int k = 0; k < TS_NPHASES; k++)
			timed &= isfinite(pa[i][k]) && pa[i][k] >= 0;
	expect("... the same scalars, in step order", same, 1);
	expect("every phase of every row has a device time", timed, 1);
	printf("%s\n", bad ? "FAIL step metrics read-back" : "PASS step metrics read back one interval late");
	return bad;
}
