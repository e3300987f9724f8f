// The comm interface: argument checks, dispatch to the backend, and per-collective call and
// byte counters of the data plane (the ring communication model of DESIGN §7, whatever the
// backend does).
#include "comm_impl.h" // defines: CommOps, struct Comm

#include <errno.h>  // defines: EINVAL
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: memset

static const char *const op_names[COMM_NOPS] = {"allgather", "allreduce", "reduce_scatter"};

double comm_model_bytes(CommOp op, int world, double b)
{
	switch (op) {
	case COMM_ALLGATHER:
	case COMM_REDUCE_SCATTER: return (world - 1) * b;
	case COMM_ALLREDUCE: return 2.0 * (world - 1) * b / world;
	default: return 0.0;
	}
}

int comm_rank(const Comm *c)
{
	return c->rank;
}

int comm_world(const Comm *c)
{
	return c->world;
}

const CommStats *comm_stats(const Comm *c)
{
	return &c->stats;
}

static int bad(Comm *c, const char *what)
{
	if (c)
		snprintf(c->err, sizeof(c->err), "%s", what);
	return -EINVAL;
}

static void count(Comm *c, CommOp op, double b)
{
	c->stats.calls[op]++;
	c->stats.bytes[op] += comm_model_bytes(op, c->world, b);
}

static int has_data(const KTensor *t)
{
	return t && t->data;
}

static int reducible(const KTensor *t)
{
	return has_data(t) && (t->dtype == KDT_F32 || t->dtype == KDT_BF16);
}

static int reduction(CommReduce op)
{
	return op == COMM_SUM || op == COMM_AVG;
}

int comm_allgather(Comm *c, const KTensor *send, KTensor *recv, KernCtx *stream)
{
	if (!c || !c->ops || !stream || !has_data(send) || !has_data(recv) || send->dtype != recv->dtype ||
	    kern_numel(recv) != (int64_t)c->world * kern_numel(send))
		return bad(c, "allgather: missing buffer or stream, or the receive buffer is not world x send");
	int rc = c->ops->allgather(c, send, recv, stream);
	if (rc == 0)
		count(c, COMM_ALLGATHER, (double)kern_nbytes(send));
	return rc;
}

int comm_allreduce(Comm *c, KTensor *buf, CommReduce op, KernCtx *stream)
{
	if (!c || !c->ops || !stream || !reducible(buf) || !reduction(op))
		return bad(c, "allreduce: needs an f32 or bf16 buffer, a stream and a known reduction");
	int rc = c->ops->allreduce(c, buf, op, stream);
	if (rc == 0)
		count(c, COMM_ALLREDUCE, (double)kern_nbytes(buf));
	return rc;
}

int comm_reduce_scatter(Comm *c, const KTensor *send, KTensor *recv, CommReduce op, KernCtx *stream)
{
	if (!c || !c->ops || !stream || !reducible(send) || !reducible(recv) || send->dtype != recv->dtype ||
	    !reduction(op) || kern_numel(send) != (int64_t)c->world * kern_numel(recv))
		return bad(
			c,
			"reduce_scatter: needs f32 or bf16 buffers of world x n and n elements, a stream, a reduction");
	int rc = c->ops->reduce_scatter(c, send, recv, op, stream);
	if (rc == 0)
		count(c, COMM_REDUCE_SCATTER, (double)kern_nbytes(recv));
	return rc;
}

int comm_allreduce_start(Comm *c, KTensor *buf, CommReduce op, KEvent *ready)
{
	if (!c || !c->ops || !ready || !reducible(buf) || !reduction(op))
		return bad(c, "allreduce_start: needs an f32 or bf16 buffer, a ready event and a known reduction");
	int rc = c->ops->allreduce_start(c, buf, op, ready);
	if (rc == 0)
		count(c, COMM_ALLREDUCE, (double)kern_nbytes(buf));
	return rc;
}

int comm_drain(Comm *c, KernCtx *stream)
{
	if (!c || !c->ops || !stream)
		return bad(c, "drain: no communicator or stream");
	return c->ops->drain(c, stream);
}

int comm_ctl_allgather(Comm *c, const void *send, void *recv, size_t bytes)
{
	if (!c || !c->ops || (bytes && (!send || !recv)))
		return bad(c, "ctl_allgather: missing buffer");
	return c->ops->ctl_allgather(c, send, recv, bytes);
}

int comm_ctl_allreduce(Comm *c, double *buf, size_t n, CommReduce op)
{
	if (!c || !c->ops || (n && !buf) || !reduction(op))
		return bad(c, "ctl_allreduce: missing buffer or unknown reduction");
	return c->ops->ctl_allreduce(c, buf, n, op);
}

int comm_ctl_broadcast(Comm *c, void *buf, size_t bytes, int root)
{
	if (!c || !c->ops || (bytes && !buf) || root < 0 || root >= c->world)
		return bad(c, "ctl_broadcast: missing buffer or root outside the world");
	return c->ops->ctl_broadcast(c, buf, bytes, root);
}

int comm_ctl_barrier(Comm *c)
{
	if (!c || !c->ops)
		return bad(c, "ctl_barrier: no communicator");
	return c->ops->ctl_barrier(c);
}

const char *comm_error(const Comm *c)
{
	return c ? c->err : "no communicator";
}

void comm_stats_reset(Comm *c)
{
	if (c)
		memset(&c->stats, 0, sizeof(c->stats));
}

int comm_stats_format(const CommStats *st, char *buf, size_t len)
{
	if (!st || !buf || len == 0)
		return -EINVAL;
	size_t n = 0;
	buf[0] = 0;
	for (int op = 0; op < COMM_NOPS && n < len; op++)
		if (st->calls[op])
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%llu/%.0fB", n ? " " : "", op_names[op],
					      (unsigned long long)st->calls[op], st->bytes[op]);
	return (int)n;
}

void comm_close(Comm *c)
{
	if (c && c->ops)
		c->ops->close(c);
}
