// A rank that dies before the step's exchange makes fastclip_exchange_run on the others return
// the comm error (-EPIPE, comm_error naming the rank) instead of hanging or computing on stale data.
#include <errno.h>  // defines: EPIPE
#include <math.h>   // defines: log
#include <string.h> // defines: strstr, strncpy

#include "fastclip.h"           // defines: fastclip_exchange_create, fastclip_exchange_run
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
	if (comm_rank(c) == 1)
		_exit(3); // dies before its forward pass finished
	FastclipConfig cfg;
	fastclip_config_default(&cfg, FASTCLIP_V3);
	KernCtx *k;
	FastclipExchange *x;
	KTensor e1, e2, ids, ls, loss, dls;
	const int64_t sh[2] = {B, D}, nb = B, one = 1;
	if (kern_ctx_create_cpu(&k, 1) < 0 || fastclip_exchange_create(&x, &cfg, c, k, B, D, KDT_F32, NS) < 0 ||
	    kern_alloc(k, &e1, KDT_F32, 2, sh) < 0 || kern_alloc(k, &e2, KDT_F32, 2, sh) < 0 ||
	    kern_alloc(k, &ids, KDT_I64, 1, &nb) < 0 || kern_alloc(k, &ls, KDT_F32, 1, &one) < 0 ||
	    kern_alloc(k, &loss, KDT_F32, 1, &one) < 0 || kern_alloc(k, &dls, KDT_F32, 1, &one) < 0)
		return 2;
	uint64_t seed = 99;
	tf_features(e1.data, B, D, &seed);
	tf_features(e2.data, B, D, &seed);
	int64_t *id = ids.data;
	for (int i = 0; i < B; i++)
		id[i] = i;
	*(float *)ls.data = (float)log(1 / 0.07);
	s->rc = fastclip_exchange_run(x, k, &e1, &e2, &ids, &ls, 0, &loss, &dls);
	strncpy(s->err, comm_error(c), sizeof(s->err) - 1);
	fastclip_exchange_free(x);
	kern_ctx_destroy(k);
	return 0;
}

int main(void)
{
	Shared *s = tc_shared(sizeof(Shared));
	int codes[2] = {0};
	if (tc_run(2, 4096, 10.0, 20.0, fn, s, codes) < 0) {
		printf("FAIL: the surviving rank hung\n");
		return 1;
	}
	printf("rank 0: fastclip_exchange_run returned %d: %s\n", s->rc, s->err);
	int ok = codes[0] == 0 && s->rc == -EPIPE && strstr(s->err, "rank 1");
	printf(ok ? "a dead rank fails the step cleanly\n" : "FAIL: expected -EPIPE naming rank 1\n");
	return ok ? 0 : 1;
}
