// World-of-one collectives: all-gather and reduce-scatter copy, all-reduce (sum or average over
// one rank) leaves the buffer as it is, broadcast and barrier do nothing.
#include "trainer_comm_local.h" // defines: trainer_comm_local_open

#include <errno.h>  // defines: ENOMEM
#include <stdlib.h> // defines: calloc, free
#include <string.h> // defines: memmove

static int local_allgather(Comm *c, const void *send, void *recv, size_t bytes)
{
	if (bytes)
		memmove(recv, send, bytes);
	return 0;
}

static int local_allreduce(Comm *c, float *buf, size_t n, CommReduce op)
{
	return 0;
}

static int local_reduce_scatter(Comm *c, const float *send, float *recv, size_t n, CommReduce op)
{
	if (n)
		memmove(recv, send, n * sizeof(float));
	return 0;
}

static int local_broadcast(Comm *c, void *buf, size_t bytes, int root)
{
	return 0;
}

static int local_barrier(Comm *c)
{
	return 0;
}

static void local_close(Comm *c)
{
	free(c);
}

static const CommOps local_ops = {
	.allgather = local_allgather,
	.allreduce_f32 = local_allreduce,
	.reduce_scatter_f32 = local_reduce_scatter,
	.broadcast = local_broadcast,
	.barrier = local_barrier,
	.close = local_close,
};

int trainer_comm_local_open(Comm **out)
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
