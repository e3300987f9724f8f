// The comm interface: argument checks, dispatch to the backend, and per-collective call and
// byte counters of the data plane (the ring communication model of DESIGN §7, whatever the
// backend does).
#include "comm_impl.h" // defines: CommOps, struct Comm

#include <errno.h>  // defines: EINVAL, E2BIG
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

// inside a group the first failure is latched: the group is then dropped at its end
static int latch(Comm *c, int rc)
{
	if (c && c->group_depth && !c->group_err)
		c->group_err = rc;
	return rc;
}

static int bad(Comm *c, const char *what)
{
	if (c)
		snprintf(c->err, sizeof(c->err), "%s", what);
	return latch(c, -EINVAL);
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

// runs one collective on the backend and counts it
static int issue(Comm *c, const CommCall *k)
{
	int rc;
	KTensor recv = k->recv;
	switch (k->op) {
	case COMM_ALLGATHER: rc = c->ops->allgather(c, &k->send, &recv, k->stream); break;
	case COMM_ALLREDUCE: rc = c->ops->allreduce(c, &recv, k->red, k->stream); break;
	default: rc = c->ops->reduce_scatter(c, &k->send, &recv, k->red, k->stream);
	}
	if (rc == 0)
		count(c, k->op, (double)kern_nbytes(k->op == COMM_ALLGATHER ? &k->send : &recv));
	return rc;
}

// now, or recorded when a group is open (its first failure is what comm_group_end returns)
static int call(Comm *c, CommOp op, const KTensor *send, KTensor *recv, CommReduce red, KernCtx *stream)
{
	CommCall k = {.op = op, .send = send ? *send : (KTensor){0}, .recv = *recv, .red = red, .stream = stream};
	if (!c->group_depth)
		return issue(c, &k);
	if (c->n_group == COMM_GROUP_MAX) {
		snprintf(c->err, sizeof c->err, "a group holds at most %d collectives", COMM_GROUP_MAX);
		return latch(c, -E2BIG);
	}
	c->group[c->n_group++] = k;
	return 0;
}

static int grouped(Comm *c, const char *what)
{
	if (!c->group_depth)
		return 0;
	snprintf(c->err, sizeof c->err,
		 "%s inside a group: the group's collectives are not on their streams until comm_group_end", what);
	return -EINVAL;
}

int comm_allgather(Comm *c, const KTensor *send, KTensor *recv, KernCtx *stream)
{
	if (!c || !c->ops || !stream || !has_data(send) || !has_data(recv) || send->dtype != recv->dtype ||
	    kern_numel(recv) != (int64_t)c->world * kern_numel(send))
		return bad(c, "allgather: missing buffer or stream, or the receive buffer is not world x send");
	return call(c, COMM_ALLGATHER, send, recv, COMM_SUM, stream);
}

int comm_allreduce(Comm *c, KTensor *buf, CommReduce op, KernCtx *stream)
{
	if (!c || !c->ops || !stream || !reducible(buf) || !reduction(op))
		return bad(c, "allreduce: needs an f32 or bf16 buffer, a stream and a known reduction");
	return call(c, COMM_ALLREDUCE, NULL, buf, op, stream);
}

int comm_reduce_scatter(Comm *c, const KTensor *send, KTensor *recv, CommReduce op, KernCtx *stream)
{
	if (!c || !c->ops || !stream || !reducible(send) || !reducible(recv) || send->dtype != recv->dtype ||
	    !reduction(op) || kern_numel(send) != (int64_t)c->world * kern_numel(recv))
		return bad(
			c,
			"reduce_scatter: needs f32 or bf16 buffers of world x n and n elements, a stream, a reduction");
	return call(c, COMM_REDUCE_SCATTER, send, recv, op, stream);
}

int comm_group_start(Comm *c)
{
	if (!c || !c->ops)
		return bad(c, "group_start: no communicator");
	c->group_depth++;
	return 0;
}

int comm_group_end(Comm *c)
{
	if (!c || !c->ops || !c->group_depth)
		return bad(c, "group_end: no group is open");
	if (--c->group_depth)
		return 0;
	const int n = c->n_group, err = c->group_err;
	c->n_group = c->group_err = 0;
	if (err || !n)
		return err;
	int rc = c->ops->group_start ? c->ops->group_start(c) : 0;
	for (int i = 0; i < n && !rc; i++)
		rc = issue(c, &c->group[i]);
	return c->ops->group_end ? c->ops->group_end(c, rc) : rc;
}

int comm_allreduce_start(Comm *c, KTensor *buf, CommReduce op, KEvent *ready)
{
	if (!c || !c->ops || !ready || !reducible(buf) || !reduction(op))
		return bad(c, "allreduce_start: needs an f32 or bf16 buffer, a ready event and a known reduction");
	if (c->group_depth)
		return grouped(c, "allreduce_start");
	int rc = c->ops->allreduce_start(c, buf, op, ready);
	if (rc == 0)
		count(c, COMM_ALLREDUCE, (double)kern_nbytes(buf));
	return rc;
}

int comm_drain(Comm *c, KernCtx *stream)
{
	if (!c || !c->ops || !stream)
		return bad(c, "drain: no communicator or stream");
	if (c->group_depth)
		return grouped(c, "drain");
	return c->ops->drain(c, stream);
}

int comm_ctl_allgather(Comm *c, const void *send, void *recv, size_t bytes)
{
	if (!c || !c->ops || (bytes && (!send || !recv)))
		return bad(c, "ctl_allgather: missing buffer");
	if (c->group_depth)
		return grouped(c, "ctl_allgather");
	return c->ops->ctl_allgather(c, send, recv, bytes);
}

int comm_ctl_allreduce(Comm *c, double *buf, size_t n, CommReduce op)
{
	if (!c || !c->ops || (n && !buf) || !reduction(op))
		return bad(c, "ctl_allreduce: missing buffer or unknown reduction");
	if (c->group_depth)
		return grouped(c, "ctl_allreduce");
	return c->ops->ctl_allreduce(c, buf, n, op);
}

int comm_ctl_broadcast(Comm *c, void *buf, size_t bytes, int root)
{
	if (!c || !c->ops || (bytes && !buf) || root < 0 || root >= c->world)
		return bad(c, "ctl_broadcast: missing buffer or root outside the world");
	if (c->group_depth)
		return grouped(c, "ctl_broadcast");
	return c->ops->ctl_broadcast(c, buf, bytes, root);
}

int comm_ctl_barrier(Comm *c)
{
	if (!c || !c->ops)
		return bad(c, "ctl_barrier: no communicator");
	if (c->group_depth)
		return grouped(c, "ctl_barrier");
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
