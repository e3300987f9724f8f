// The rule of a resume that raises --steps: a run of 100 steps resumed at its end (LR at lr_min)
// with --steps 200 does not jump back up to mid-cosine: the LR goes linearly from the last LR the
// old schedule gave to the new run's cosine over the join (--warmup-steps, else a tenth of the
// steps left), then follows the new cosine to lr_min at step 200. A run resumed again later within the
// same schedule (the join recorded) continues it exactly; the τ group's peak scales the join.
#include "model.h" // defines: OptConfig, optim_config_default, optim_lr, optim_lr_of, optim_join_schedule

#include <math.h>
#include <stdio.h>

static int bad;

static void near(const char *what, double got, double want)
{
	int ok = fabs(got - want) <= 1e-15 + 1e-12 * fabs(want);
	printf("%-4s %-44s %.15g (want %.15g)\n", ok ? "ok" : "FAIL", what, got, want);
	bad |= !ok;
}

int main(void)
{
	OptConfig old, c;
	optim_config_default(&old);
	old.lr = 1e-3, old.lr_min = 1e-5, old.warmup_steps = 0, old.total_steps = 100;
	c = old;
	c.total_steps = 200;
	optim_join_schedule(&c, &old, 100);
	const double from = optim_lr(&old, 99); // the last update of the old run: lr_min's neighbour
	near("join starts at the checkpoint", (double)c.join_step, 100);
	near("join lasts a tenth of the 100 steps left", (double)c.join_len, 10);
	near("join from the old run's last LR", c.join_lr, from);
	// the new run's cosine at step s, as if it had started with --steps 200
	OptConfig plain = c;
	plain.join_len = 0;
	near("first update after the resume", optim_lr(&c, 100), from + (optim_lr(&plain, 100) - from) / 10);
	near("third update", optim_lr(&c, 102), from + (optim_lr(&plain, 102) - from) * 3 / 10);
	near("last update of the join is on the new cosine", optim_lr(&c, 109), optim_lr(&plain, 109));
	near("after the join: the new cosine", optim_lr(&c, 150), optim_lr(&plain, 150));
	near("new end", optim_lr(&c, 200), 1e-5);
	// no jump: no update of the join moves more than a tenth of the way to the new cosine's start
	double step_max = 0;
	for (int64_t s = 100; s < 110; s++) {
		double d = fabs(optim_lr(&c, s) - (s == 100 ? from : optim_lr(&c, s - 1)));
		step_max = d > step_max ? d : step_max;
	}
	bad |= step_max > (optim_lr(&plain, 100) - from) / 10 * 1.0001; // a jump would be 10x that
	printf("%-4s largest change of one update in the join %.3g\n", bad ? "FAIL" : "ok", step_max);
	// with --warmup-steps the join is that long
	OptConfig w = old;
	w.warmup_steps = 8;
	OptConfig wn = w;
	wn.total_steps = 200;
	optim_join_schedule(&wn, &w, 100);
	near("join of --warmup-steps 8", (double)wn.join_len, 8);
	// a second resume within the same schedule keeps the join (the checkpoint records it)
	OptConfig again = c;
	near("resumed again at 102: same LR", optim_lr(&again, 102), optim_lr(&c, 102));
	// the τ group (its own peak) joins in its own scale
	near("τ group, peak 1e-2, first update", optim_lr_of(&c, 1e-2, 100),
	     from * 10 + (optim_lr_of(&plain, 1e-2, 100) - from * 10) / 10);
	// lowering --steps below the checkpoint: nothing left, no join
	OptConfig low = old;
	low.total_steps = 80;
	optim_join_schedule(&low, &old, 100);
	near("--steps below the checkpoint: no join", (double)low.join_len, 0);
	printf("%s\n", bad ? "FAIL raised --steps rule" : "PASS raised --steps joins the new cosine without a jump");
	return bad;
}
