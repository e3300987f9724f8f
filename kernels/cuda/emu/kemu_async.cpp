// cp.async in the shim: each thread's copies not yet waited for, in commit groups, per block
// (the model and its limits: kemu_async.h).
// the standard headers before kemu.h, whose dialect macros (__noinline__) they must not see
#include <deque>

#include "kemu_impl.h"  // defines: kemu_async_block_begin, kemu_async_block_end
#include "kemu_async.h" // defines: kemu::async_*

#include <errno.h>
#include <stdio.h>

namespace
{
struct Queue {
	std::vector<kemu::AsyncCopy> open;               // issued since the last commit
	std::deque<std::vector<kemu::AsyncCopy>> groups; // committed, oldest first
};
std::vector<Queue> Q; // per thread of the running block (one OS thread runs fibers at a time)

Queue &mine()
{
	return Q[kemu::cur->linear];
}
} // namespace

void kemu::async_check(void *dst, const void *src, unsigned n, const char *file, int line)
{
	if ((uintptr_t)dst % n || (uintptr_t)src % n)
		fault("cp.async of %u bytes at %s:%d: %p or %p is not %u-byte aligned", n, file, line, dst, src, n);
	if (!in_shared(dst, n))
		fault("cp.async at %s:%d: destination %p is not in shared memory", file, line, dst);
}

void kemu::async_issue(void *dst, const void *data, unsigned n)
{
	AsyncCopy c;
	c.dst = dst;
	c.n = n;
	memcpy(c.data, data, n);
	mine().open.push_back(c);
}

void kemu::async_commit()
{
	Queue &q = mine();
	q.groups.push_back(std::move(q.open)); // an empty group counts as one, as in PTX
	q.open.clear();
}

size_t kemu::async_take(int keep, AsyncCopy *out, size_t cap)
{
	Queue &q = mine();
	size_t n = 0;
	while ((int)q.groups.size() > (keep < 0 ? 0 : keep)) {
		std::vector<AsyncCopy> &g = q.groups.front();
		size_t k = 0;
		for (; k < g.size() && n < cap; k++)
			out[n++] = g[k];
		g.erase(g.begin(), g.begin() + (long)k);
		if (!g.empty())
			break; // out is full: the caller asks again
		q.groups.pop_front();
	}
	return n;
}

void kemu_async_block_begin(unsigned nthreads)
{
	Q.assign(nthreads, Queue());
}

int kemu_async_block_end(char *msg, size_t len)
{
	for (size_t t = 0; t < Q.size(); t++) {
		size_t n = Q[t].open.size();
		for (const auto &g : Q[t].groups)
			n += g.size();
		if (n) {
			snprintf(msg, len,
				 "thread %zu (linear) returned with %zu cp.async copies it never waited for "
				 "(kcp_async_wait<0> before the end)",
				 t, n);
			Q.clear();
			return -EFAULT;
		}
	}
	Q.clear();
	return 0;
}
