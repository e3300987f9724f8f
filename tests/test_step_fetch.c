// The logged scalars' read-back one interval late (trainer_step.h): a step writes one of two
// metrics blocks; a full block is handed to the host while the steps fill the other, the oldest is
// taken first, a step into a full block or one still on its way is refused (-ENOSPC, -EBUSY), and
// the rows and the phases' device times (timed events) come back in step order, the scalars equal
// to a synchronous read-back's. Built twice: on the CPU backend, and as test_kcuda_step_fetch on the
// CUDA backend through the shim, where under asynchronous streams (KEMU_SCHED_SEED) a row read
// before its copy landed would be the poisoned destination's NaN. --planted-early-read (the CUDA
// build) reads a block's host copy before waiting for it, as a read-back that forgot its event
// would: the shim's asynchronous streams must show the poison there, whatever the seed.
#include <errno.h>  // defines: EBUSY, ENOSPC, ENODEV
#include <math.h>   // defines: isfinite
#include <stdio.h>  // defines: printf
#include <stdlib.h> // defines: strtoull
#include <string.h> // defines: strcmp

#include "test_trainer_util.h" // defines: tt_step_config, TtRank, tt_rank_close, tt_upload

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
#ifndef STEP_FETCH_CUDA
	expect("... landed (the CPU backend's copy is done when queued)", train_step_fetch_ready(r->ts), 1);
#endif
	if (train_step_fetch_pending(r->ts) < 2)
		return 0;
	expect("a step into the block still on its way", train_step_run(r->ts, 0, &tt), -EBUSY);
	expect("take the oldest", train_step_fetch_end(r->ts, rows[got], ph[got], &n, &blk), 0);
	expect("... the block the next steps write", blk, r->ts->blk);
	return n;
}

// the step both backends run: two heads of 64 (the head dims the CUDA attention has), bf16
// activations (the CUDA backend's), blocks of EVERY rows
static void step_config(TrainStepConfig *cfg)
{
	tt_step_config(cfg, FASTCLIP_V3, 4, 32);
	cfg->log_every = EVERY;
	cfg->model.vis_width = cfg->model.txt_width = 128;
	cfg->model.embed_dim = 32;
	cfg->act = KDT_BF16;
}

// one rank on the backend this test is built for (tt_rank_open's, on that context)
static int open_rank(TtRank *r, const TrainStepConfig *cfg)
{
#ifdef STEP_FETCH_CUDA
	KCtxOptions o = {.backend = KERN_BACKEND_CUDA, .attention = KERN_ATTN_OWN};
	int rc = kern_ctx_create(&r->ctx, &o);
#else
	int rc = kern_ctx_create_cpu(&r->ctx, 1);
#endif
	if (rc < 0)
		return rc;
	if (comm_local_open(&r->comm) < 0 || train_step_create(&r->ts, r->ctx, r->comm, cfg) < 0 ||
	    train_step_init(r->ts, 5) < 0)
		return -1;
	return 0;
}

// STEPS steps, read back one interval late (lag 1) or at once; the rows read
static int run(int lag, float (*rows)[TS_NSCALARS], double (*ph)[TS_NPHASES])
{
	TrainStepConfig cfg;
	step_config(&cfg);
	TtRank r = {0};
	TrainStepTimes tt;
	int orc = open_rank(&r, &cfg);
	if (orc < 0)
		return orc;
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

#ifdef STEP_FETCH_CUDA
void kemu_sched_c(uint64_t seed) __attribute__((weak));

// hands a block over and reads its host copy at once: 0 when that read saw the poison
static int planted_early_read(uint64_t seed)
{
	if (!kemu_sched_c)
		return printf("not linked with the shim: skipped\n"), 77;
	kemu_sched_c(seed);
	TrainStepConfig cfg;
	step_config(&cfg);
	TtRank r = {0};
	TrainStepTimes tt;
	if (open_rank(&r, &cfg) < 0 || tt_upload(r.ts, 5, 0, 0) < 0 || train_step_run(r.ts, 0, &tt) < 0 ||
	    train_step_fetch_begin(r.ts) < 0)
		return printf("FAIL the step did not run\n"), 1;
	const float early = r.ts->fetch_host[0][TS_LOSS]; // the bug: no wait for fetch_done[0]
	float row[TS_NSCALARS];
	int n, blk;
	const int rc = train_step_fetch_end(r.ts, row, NULL, &n, &blk);
	tt_rank_close(&r);
	printf("planted early read (KEMU_SCHED_SEED=%llu): %g before the wait, %g after it (rc %d)\n",
	       (unsigned long long)seed, early, row[TS_LOSS], rc);
	return !isfinite(early) && isfinite(row[TS_LOSS]) ? 0 : 1;
}
#endif

int main(int argc, char **argv)
{
#ifdef STEP_FETCH_CUDA
	if (argc > 2 && !strcmp(argv[1], "--planted-early-read"))
		return planted_early_read(strtoull(argv[2], NULL, 0));
#endif
	(void)argc, (void)argv;
	float a[STEPS][TS_NSCALARS], b[STEPS][TS_NSCALARS];
	double pa[STEPS][TS_NPHASES], pb[STEPS][TS_NPHASES];
	const int na = run(1, a, pa);
	if (na == -ENODEV) {
		printf("no CUDA backend in this build: skipped\n");
		return 77;
	}
	const int nb = run(0, b, pb);
	expect("rows read back one interval late", na, STEPS);
	expect("rows read back at once", nb, STEPS);
	int same = na == STEPS && nb == STEPS, timed = same;
	for (int i = 0; same && i < STEPS; i++)
		for (int k = 0; k < TS_NSCALARS; k++)
			same &= a[i][k] == b[i][k] && isfinite(a[i][k]); // a poisoned row is NaN
	for (int i = 0; timed && i < STEPS; i++)
		for (int k = 0; k < TS_NPHASES; k++)
			timed &= isfinite(pa[i][k]) && pa[i][k] >= 0;
	expect("... the same scalars, in step order", same, 1);
	expect("every phase of every row has a device time", timed, 1);
	printf("%s\n", bad ? "FAIL step metrics read-back" : "PASS step metrics read back one interval late");
	return bad;
}
