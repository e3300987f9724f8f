// Bucketed gradient all-reduce over the flat gradient buffer. Buckets are runs of consecutive
// gradient groups in the order backward finishes them, so each is one contiguous range reduced
// in place: when its last group is reported an event is recorded on the compute stream and the
// bucket's all-reduce is started on the communicator's own queue (comm thread or comm stream);
// finish drains. Every rank starts the same buckets in the same order.
#include "comm.h" // defines: CommBuckets, comm_allreduce_start, comm_drain

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdlib.h> // defines: calloc, free

struct CommBuckets {
	Comm *comm;
	KTensor grads;
	int n_groups, n_buckets, next; // next: the group expected next
	int64_t *goff, *glen;          // (n_groups) in backward order
	int *closes;                   // (n_groups) the bucket this group completes, or -1
	int64_t *boff, *blen;          // (n_buckets) element ranges of grads
	KEvent **ev;                   // (n_buckets)
};

void comm_buckets_free(CommBuckets *b)
{
	if (!b)
		return;
	for (int j = 0; b->ev && j < b->n_buckets; j++)
		kern_event_destroy(b->ev[j]);
	free(b->ev);
	free(b->goff);
	free(b->glen);
	free(b->closes);
	free(b->boff);
	free(b->blen);
	free(b);
}

// groups adjacent and descending inside grads
static int groups_ok(const KTensor *grads, const int64_t *off, const int64_t *len, int n)
{
	for (int k = 0; k < n; k++) {
		if (len[k] < 1 || off[k] < 0 || off[k] + len[k] > kern_numel(grads))
			return 0;
		if (k && off[k] + len[k] != off[k - 1])
			return 0;
	}
	return 1;
}

int comm_buckets_create(CommBuckets **out, Comm *c, KernCtx *ctx, KTensor *grads, const int64_t *offsets,
			const int64_t *lengths, int n_groups, size_t bucket_bytes)
{
	if (!out || !c || !ctx || !grads || !grads->data || (grads->dtype != KDT_F32 && grads->dtype != KDT_BF16) ||
	    !offsets || !lengths || n_groups < 1 || !groups_ok(grads, offsets, lengths, n_groups))
		return -EINVAL;
	const int64_t cap = (int64_t)(bucket_bytes / kern_dtype_size(grads->dtype));
	if (cap < 1)
		return -EINVAL;
	CommBuckets *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->comm = c;
	b->grads = *grads;
	b->grads.owned = 0;
	b->n_groups = n_groups;
	b->goff = calloc((size_t)n_groups, sizeof(int64_t));
	b->glen = calloc((size_t)n_groups, sizeof(int64_t));
	b->closes = calloc((size_t)n_groups, sizeof(int));
	b->boff = calloc((size_t)n_groups, sizeof(int64_t));
	b->blen = calloc((size_t)n_groups, sizeof(int64_t));
	b->ev = calloc((size_t)n_groups, sizeof(KEvent *));
	if (!b->goff || !b->glen || !b->closes || !b->boff || !b->blen || !b->ev) {
		comm_buckets_free(b);
		return -ENOMEM;
	}
	int nb = -1;
	for (int k = 0; k < n_groups; k++) {
		b->goff[k] = offsets[k];
		b->glen[k] = lengths[k];
		b->closes[k] = -1;
		if (nb < 0 || b->blen[nb] + lengths[k] > cap)
			nb++;
		b->boff[nb] = offsets[k]; // the bucket grows downwards
		b->blen[nb] += lengths[k];
	}
	b->n_buckets = nb + 1;
	// a bucket starts where its last group starts: that group closes it
	for (int k = 0, j = 0; k < n_groups; k++)
		if (b->goff[k] == b->boff[j])
			b->closes[k] = j++;
	for (int j = 0; j < b->n_buckets; j++) {
		int rc = kern_event_create(ctx, &b->ev[j]);
		if (rc < 0) {
			comm_buckets_free(b);
			return rc;
		}
	}
	*out = b;
	return 0;
}

int comm_buckets_ready(CommBuckets *b, KernCtx *stream, int64_t offset, int64_t length)
{
	if (!b || !stream || b->next >= b->n_groups || offset != b->goff[b->next] || length != b->glen[b->next])
		return -EINVAL;
	int j = b->closes[b->next++];
	if (j < 0)
		return 0;
	KTensor view;
	int rc = kern_view(&view, &b->grads, b->boff[j], 1, &b->blen[j]);
	if (!rc)
		rc = kern_event_record(b->ev[j], stream);
	return rc ? rc : comm_allreduce_start(b->comm, &view, COMM_AVG, b->ev[j]);
}

int comm_buckets_finish(CommBuckets *b, KernCtx *stream)
{
	if (!b || !stream || b->next != b->n_groups)
		return -EINVAL;
	b->next = 0;
	return comm_drain(b->comm, stream);
}

int comm_buckets_count(const CommBuckets *b)
{
	return b ? b->n_buckets : 0;
}
