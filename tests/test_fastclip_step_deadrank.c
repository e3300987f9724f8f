// A rank that dies before the step's exchange makes fastclip_step_run on the others return the
// comm error (-EPIPE, comm_error naming the rank) instead of hanging or computing on stale data.
#include <errno.h>  // defines: EPIPE
#include <math.h>   // defines: log
#include <string.h> // defines: strstr, strncpy

#include "fastclip_step.h"      // defines: fastclip_step_create, fastclip_step_run
#include "test_comm_util.h"     // defines: tc_run, tc_shared
#include "test_fastclip_util.h" // defines: tf_features

enum { B = 4, D = 8, NS = 16 };

typedef struct {
	int rc;
	char err[256];
} Shared;

static int fn(Comm *c, void *arg)
{
	Shared *s = arg;
	if (c->rank == 1)
		_exit(3); // dies before its forward pass finished
	FastclipConfig cfg;
	fastclip_config_default(&cfg, FASTCLIP_V3);
	FastclipTables t;
	FastclipStep *st;
	if (fastclip_tables_create(&t, &cfg, NS) < 0 || fastclip_step_create(&st, &cfg, c, &t, B, D) < 0)
		return 2;
	float e1[B * D], e2[B * D], g1[B * D], g2[B * D];
	uint64_t seed = 99;
	tf_features(e1, B, D, &seed);
	tf_features(e2, B, D, &seed);
	int64_t ids[B] = { 0, 1, 2, 3 };
	FastclipGrads g = { .de1 = g1, .de2 = g2 };
	s->rc = fastclip_step_run(st, 0, e1, e2, ids, log(1 / 0.07), &g);
	strncpy(s->err, comm_error(c), sizeof(s->err) - 1);
	fastclip_step_free(st);
	fastclip_tables_free(&t);
	return 0;
}

int main(void)
{
	Shared *s = tc_shared(sizeof(Shared));
	int codes[2] = { 0 };
	if (tc_run(2, 4096, 10.0, 20.0, fn, s, codes) < 0) {
		printf("FAIL: the surviving rank hung\n");
		return 1;
	}
	printf("rank 0: fastclip_step_run returned %d: %s\n", s->rc, s->err);
	int ok = codes[0] == 0 && s->rc == -EPIPE && strstr(s->err, "rank 1");
	printf(ok ? "a dead rank fails the step cleanly\n" : "FAIL: expected -EPIPE naming rank 1\n");
	return ok ? 0 : 1;
}
