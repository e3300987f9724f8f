// The shm backend's data plane and its comm thread. Design: the CPU backend's device buffers
// are host memory, so a collective copies them through the segment (comm_shm.c's engine) once
// the work queued on the caller's stream is done. All-reduces started with comm_allreduce_start
// go into a FIFO that one comm thread per rank serves in order: it waits for each job's ready
// event and reduces while the caller goes on with backward. Guarantees: jobs run in the order
// they were started; every other call (inline collectives, control channel, close) first waits
// until the FIFO is empty, so the segment serves one collective at a time and every rank issues
// the same sequence. The thread reports through its own Comm view; drain hands its first error
// (and the sentence) to the caller. Not guaranteed: overlap on a machine without a spare core.
#include "comm_shm_impl.h" // defines: Shm, ShmJob, shm_reduce, ...

#include <errno.h>  // defines: ENOTSUP, EINVAL
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: strcmp, memcpy

static Shm *impl(Comm *c)
{
	return c->impl;
}

// waits for ev unless it is complete already (the CPU backend's events always are, so the host
// wait counter only sees waits that block)
static int event_wait(KEvent *ev)
{
	int q = kern_event_query(ev);
	if (q == 1)
		return 0;
	return q < 0 ? q : kern_event_sync(ev);
}

// the work queued on stream so far is done; the stream must be the CPU backend's (whose events
// cost nothing to make: the comm keeps none, so it may outlive the caller's device)
static int stream_ready(Comm *c, KernCtx *stream)
{
	if (strcmp(kern_ctx_backend_name(stream), "cpu")) {
		snprintf(c->err, sizeof(c->err),
			 "the shm backend moves host memory: the %s backend needs another comm backend",
			 kern_ctx_backend_name(stream));
		return -ENOTSUP;
	}
	KEvent *ev;
	int rc = kern_event_create(stream, &ev);
	if (rc < 0)
		return rc;
	if ((rc = kern_event_record(ev, stream)) == 0)
		rc = event_wait(ev);
	kern_event_destroy(ev);
	return rc;
}

static void *comm_thread(void *arg)
{
	Shm *s = arg;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->count && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu);
		if (!s->count)
			break;
		ShmJob j = s->q[s->head];
		int skip = s->thread_rc;
		s->busy = 1;
		pthread_mutex_unlock(&s->mu);
		int rc = skip ? 0 : event_wait(j.ready);
		if (!skip && !rc)
			rc = shm_reduce(&s->tc, j.buf, j.n, j.dt, j.op);
		pthread_mutex_lock(&s->mu);
		if (rc && !s->thread_rc)
			s->thread_rc = rc;
		s->head = (s->head + 1) % SHM_QUEUE;
		s->count--;
		s->busy = 0;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

void shm_thread_init(Shm *s)
{
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
}

// waits until the FIFO is empty; the thread's first error, its sentence copied into c->err
static int idle(Comm *c)
{
	Shm *s = impl(c);
	pthread_mutex_lock(&s->mu);
	while (s->count || s->busy)
		pthread_cond_wait(&s->cv, &s->mu);
	int rc = s->thread_rc;
	if (rc)
		memcpy(c->err, s->tc.err, sizeof(c->err));
	pthread_mutex_unlock(&s->mu);
	return rc;
}

void shm_thread_stop(Comm *c)
{
	Shm *s = impl(c);
	if (s->started) {
		idle(c);
		pthread_mutex_lock(&s->mu);
		s->stop = 1;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
	}
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
}

static int shm_allgather(Comm *c, const KTensor *send, KTensor *recv, KernCtx *stream)
{
	int rc = idle(c);
	if (!rc)
		rc = stream_ready(c, stream);
	return rc ? rc : shm_gather(c, send->data, recv->data, kern_nbytes(send));
}

static int shm_allreduce(Comm *c, KTensor *buf, CommReduce op, KernCtx *stream)
{
	int rc = idle(c);
	if (!rc)
		rc = stream_ready(c, stream);
	return rc ? rc : shm_reduce(c, buf->data, (size_t)kern_numel(buf), buf->dtype, op);
}

static int shm_reduce_scatter_t(Comm *c, const KTensor *send, KTensor *recv, CommReduce op, KernCtx *stream)
{
	int rc = idle(c);
	if (!rc)
		rc = stream_ready(c, stream);
	return rc ? rc : shm_reduce_scatter(c, send->data, recv->data, (size_t)kern_numel(recv), recv->dtype, op);
}

static int shm_allreduce_start(Comm *c, KTensor *buf, CommReduce op, KEvent *ready)
{
	Shm *s = impl(c);
	pthread_mutex_lock(&s->mu);
	int rc = s->thread_rc;
	if (!rc && !s->started) {
		s->tc = (Comm){.ops = c->ops, .impl = s, .rank = c->rank, .world = c->world};
		if (pthread_create(&s->thread, NULL, comm_thread, s) == 0) {
			s->started = 1;
		} else {
			snprintf(c->err, sizeof(c->err), "cannot start the comm thread");
			rc = -EAGAIN;
		}
	}
	while (!rc && s->count == SHM_QUEUE)
		pthread_cond_wait(&s->cv, &s->mu);
	if (!rc) {
		s->q[(s->head + s->count) % SHM_QUEUE] = (ShmJob){
			.buf = buf->data, .n = (size_t)kern_numel(buf), .dt = buf->dtype, .op = op, .ready = ready};
		s->count++;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

// the comm thread writes the results into host memory itself: nothing to order on the stream
static int shm_drain(Comm *c, KernCtx *stream)
{
	return idle(c);
}

static int shm_ctl_allgather(Comm *c, const void *send, void *recv, size_t bytes)
{
	int rc = idle(c);
	return rc ? rc : shm_gather(c, send, recv, bytes);
}

static int shm_ctl_allreduce(Comm *c, double *buf, size_t n, CommReduce op)
{
	int rc = idle(c);
	return rc ? rc : shm_reduce(c, buf, n, KDT_F64, op);
}

static int shm_ctl_broadcast(Comm *c, void *buf, size_t bytes, int root)
{
	int rc = idle(c);
	return rc ? rc : shm_bcast(c, buf, bytes, root);
}

static int shm_ctl_barrier(Comm *c)
{
	int rc = idle(c);
	return rc ? rc : shm_barrier(c);
}

const CommOps shm_comm_ops = {
	.allgather = shm_allgather,
	.allreduce = shm_allreduce,
	.reduce_scatter = shm_reduce_scatter_t,
	.allreduce_start = shm_allreduce_start,
	.drain = shm_drain,
	.ctl_allgather = shm_ctl_allgather,
	.ctl_allreduce = shm_ctl_allreduce,
	.ctl_broadcast = shm_ctl_broadcast,
	.ctl_barrier = shm_ctl_barrier,
	.close = shm_close_comm,
};
