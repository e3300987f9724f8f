// The group contract of comm (comm.h GROUPS) on the world-of-one backend with the CPU kernels, whose
// ops run when called: a grouped all-gather has not run before the outermost comm_group_end (nested
// groups count depth) and has after it, in call order; a control call, a started all-reduce or a
// drain inside a group is refused; a call that fails inside a group drops the group; an end without
// a start is an error.
#include <errno.h>  // defines: EINVAL, E2BIG
#include <string.h> // defines: strstr

#include "test_comm_util.h" // defines: tc_tensor, comm_local_open

static int fails;
#define EXPECT(cond)                                                                                                   \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			printf("FAIL line %d: %s\n", __LINE__, #cond);                                                 \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

int main(void)
{
	Comm *c = NULL;
	KernCtx *k = NULL;
	EXPECT(comm_local_open(&c) == 0 && kern_ctx_create_cpu(&k, 1) == 0);
	if (!c || !k)
		return 1;
	float a[4] = {1, 2, 3, 4}, b[4] = {0}, d[4] = {0};
	KTensor ta = tc_tensor(a, KDT_F32, 4), tb = tc_tensor(b, KDT_F32, 4), td = tc_tensor(d, KDT_F32, 4);
	EXPECT(comm_group_end(c) == -EINVAL); // none open
	EXPECT(comm_group_start(c) == 0);
	EXPECT(comm_allgather(c, &ta, &tb, k) == 0);
	EXPECT(comm_group_start(c) == 0);
	EXPECT(comm_allgather(c, &tb, &td, k) == 0); // in call order: b is gathered before d reads it
	EXPECT(comm_group_end(c) == 0);
	EXPECT(b[0] == 0 && d[0] == 0); // recorded, not run: the inner end is not the outermost
	double v = 1;
	KEvent *ev = NULL;
	EXPECT(kern_event_create(k, &ev) == 0);
	EXPECT(comm_ctl_allreduce(c, &v, 1, COMM_SUM) == -EINVAL && strstr(comm_error(c), "inside a group"));
	EXPECT(comm_ctl_barrier(c) == -EINVAL);
	EXPECT(comm_drain(c, k) == -EINVAL);
	EXPECT(ev && comm_allreduce_start(c, &tb, COMM_SUM, ev) == -EINVAL);
	EXPECT(comm_stats(c)->calls[COMM_ALLGATHER] == 0);
	EXPECT(comm_group_end(c) == 0);
	EXPECT(b[0] == 1 && b[3] == 4 && d[0] == 1 && d[3] == 4);
	EXPECT(comm_stats(c)->calls[COMM_ALLGATHER] == 2);
	EXPECT(comm_ctl_barrier(c) == 0 && comm_drain(c, k) == 0); // closed: allowed again
	// a failing call inside a group drops the group: nothing of it runs
	float e[4] = {0};
	KTensor te = tc_tensor(e, KDT_F32, 4), tn = tc_tensor(NULL, KDT_F32, 4);
	EXPECT(comm_group_start(c) == 0);
	EXPECT(comm_allgather(c, &ta, &te, k) == 0);
	EXPECT(comm_allgather(c, &tn, &te, k) == -EINVAL);
	EXPECT(comm_group_end(c) == -EINVAL && e[0] == 0);
	EXPECT(comm_group_start(c) == 0);
	int rc = 0;
	for (int i = 0; i <= COMM_GROUP_MAX && !rc; i++)
		rc = comm_allgather(c, &ta, &te, k);
	EXPECT(rc == -E2BIG);
	EXPECT(comm_group_end(c) == -E2BIG && e[0] == 0);
	EXPECT(comm_group_end(c) == -EINVAL); // the group above is closed
	kern_event_destroy(ev);
	kern_ctx_destroy(k);
	comm_close(c);
	printf(fails ? "FAIL: %d group checks\n" : "the group contract holds\n", fails);
	return fails ? 1 : 0;
}
