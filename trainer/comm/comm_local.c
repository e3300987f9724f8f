// World-of-one collectives: the all-gather and the reduce-scatter copy on the stream (so any
// kernels backend works), all-reduces (sum or average over one rank) leave the buffer as it is,
// the control channel copies or does nothing.
#include "comm_impl.h" // defines: CommOps, struct Comm

#include <errno.h>  // defines: ENOMEM
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memmove

static int local_allgather(Comm *c, const KTensor *send, KTensor *recv, KernCtx *stream)
{
	return kern_copy(stream, recv, send);
}

static int local_allreduce(Comm *c, KTensor *buf, CommReduce op, KernCtx *stream)
{
	return 0;
}

static int local_reduce_scatter(Comm *c, const KTensor *send, KTensor *recv, CommReduce op, KernCtx *stream)
{
	return kern_copy(stream, recv, send);
}

static int local_allreduce_start(Comm *c, KTensor *buf, CommReduce op, KEvent *ready)
{
	return 0;
}

static int local_drain(Comm *c, KernCtx *stream)
{
	return 0;
}

static int local_ctl_allgather(Comm *c, const void *send, void *recv, size_t bytes)
{
	if (bytes)
		memmove(recv, send, bytes);
	return 0;
}

static int local_ctl_allreduce(Comm *c, double *buf, size_t n, CommReduce op)
{
	return 0;
}

static int local_ctl_broadcast(Comm *c, void *buf, size_t bytes, int root)
{
	return 0;
}

static int local_ctl_barrier(Comm *c)
{
	return 0;
}

static void local_close(Comm *c)
{
	free(c);
}

static const CommOps local_ops = {
	.allgather = local_allgather,
	.allreduce = local_allreduce,
	.reduce_scatter = local_reduce_scatter,
	.allreduce_start = local_allreduce_start,
	.drain = local_drain,
	.ctl_allgather = local_ctl_allgather,
	.ctl_allreduce = local_ctl_allreduce,
	.ctl_broadcast = local_ctl_broadcast,
	.ctl_barrier = local_ctl_barrier,
	.close = local_close,
};

int comm_local_open(Comm **out)
{
	Comm *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ops = &local_ops;
	c->rank = 0;
	c->world = 1;
	*out = c;
	return 0;
}
