// The comm interface: argument checks, dispatch to the backend, and per-collective call and
// byte counters (the ring communication model of DESIGN §7, whatever the backend does).
#include "comm.h" // defines: Comm, comm_allgather, ...

#include <errno.h>  // defines: EINVAL
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: memset

static const char *const op_names[COMM_NOPS] = { "allgather", "allreduce", "reduce_scatter", "broadcast", "barrier" };

const char *comm_op_name(CommOp op)
{
	return (unsigned)op < COMM_NOPS ? op_names[op] : "unknown";
}

double comm_model_bytes(CommOp op, int world, int rank, int root, double b)
{
	switch (op) {
	case COMM_ALLGATHER:
	case COMM_REDUCE_SCATTER: return (world - 1) * b;
	case COMM_ALLREDUCE: return 2.0 * (world - 1) * b / world;
	case COMM_BROADCAST: return world > 1 && rank != (root + world - 1) % world ? b : 0.0;
	default: return 0.0;
	}
}

static int bad(Comm *c, const char *what)
{
	if (c)
		snprintf(c->err, sizeof(c->err), "%s", what);
	return -EINVAL;
}

static void count(Comm *c, CommOp op, int root, double b)
{
	c->stats.calls[op]++;
	c->stats.bytes[op] += comm_model_bytes(op, c->world, c->rank, root, b);
}

int comm_allgather(Comm *c, const void *send, void *recv, size_t bytes)
{
	if (!c || !c->ops || (bytes && (!send || !recv)))
		return bad(c, "allgather: missing buffer");
	int rc = c->ops->allgather(c, send, recv, bytes);
	if (rc == 0)
		count(c, COMM_ALLGATHER, 0, (double)bytes);
	return rc;
}

int comm_allreduce_f32(Comm *c, float *buf, size_t n, CommReduce op)
{
	if (!c || !c->ops || (n && !buf) || (op != COMM_SUM && op != COMM_AVG))
		return bad(c, "allreduce: missing buffer or unknown reduction");
	int rc = c->ops->allreduce_f32(c, buf, n, op);
	if (rc == 0)
		count(c, COMM_ALLREDUCE, 0, (double)n * sizeof(float));
	return rc;
}

int comm_reduce_scatter_f32(Comm *c, const float *send, float *recv, size_t n, CommReduce op)
{
	if (!c || !c->ops || (n && (!send || !recv)) || (op != COMM_SUM && op != COMM_AVG))
		return bad(c, "reduce_scatter: missing buffer or unknown reduction");
	int rc = c->ops->reduce_scatter_f32(c, send, recv, n, op);
	if (rc == 0)
		count(c, COMM_REDUCE_SCATTER, 0, (double)n * sizeof(float));
	return rc;
}

int comm_broadcast(Comm *c, void *buf, size_t bytes, int root)
{
	if (!c || !c->ops || (bytes && !buf) || root < 0 || root >= c->world)
		return bad(c, "broadcast: missing buffer or root outside the world");
	int rc = c->ops->broadcast(c, buf, bytes, root);
	if (rc == 0)
		count(c, COMM_BROADCAST, root, (double)bytes);
	return rc;
}

int comm_barrier(Comm *c)
{
	if (!c || !c->ops)
		return bad(c, "barrier: no communicator");
	int rc = c->ops->barrier(c);
	if (rc == 0)
		count(c, COMM_BARRIER, 0, 0.0);
	return rc;
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
