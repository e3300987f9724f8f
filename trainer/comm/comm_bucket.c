// Bucketed gradient all-reduce: pack a bucket's gradients into one flat buffer, all-reduce it
// (average), unpack. Buckets are reduced strictly in index order on every rank, whatever order
// the gradients become ready in, so all ranks issue the same sequence of collectives.
#include "comm_bucket.h" // defines: CommBuckets, ...

#include <errno.h>  // defines: EINVAL, ENOMEM
#include <stdlib.h> // defines: calloc, malloc, free
#include <string.h> // defines: memcpy

struct CommBuckets {
	Comm *comm;
	int nparams, nbuckets, next;  // next: first bucket not yet reduced
	float **grads;                // (nparams)
	size_t *sizes;                // (nparams)
	int *bucket_of;               // (nparams)
	unsigned char *ready;         // (nparams)
	int *first, *count, *pending; // (nbuckets): params first..first+count-1 in reverse order
	size_t *elems;                // (nbuckets)
	int *order;                   // (nparams) parameter indices in reverse registration order
	float *flat;                  // (max bucket elems)
};

void comm_buckets_free(CommBuckets *b)
{
	if (!b)
		return;
	free(b->grads);
	free(b->sizes);
	free(b->bucket_of);
	free(b->ready);
	free(b->first);
	free(b->count);
	free(b->pending);
	free(b->elems);
	free(b->order);
	free(b->flat);
	free(b);
}

int comm_buckets_create(CommBuckets **out, Comm *c, int nparams, float *const *grads, const size_t *sizes,
			size_t bucket_bytes)
{
	if (!out || !c || nparams < 1 || !grads || !sizes || bucket_bytes < sizeof(float))
		return -EINVAL;
	for (int i = 0; i < nparams; i++)
		if (!grads[i] || sizes[i] == 0)
			return -EINVAL;
	CommBuckets *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->comm = c;
	b->nparams = nparams;
	b->grads = malloc(sizeof(float *) * nparams);
	b->sizes = malloc(sizeof(size_t) * nparams);
	b->bucket_of = malloc(sizeof(int) * nparams);
	b->ready = calloc((size_t)nparams, 1);
	b->order = malloc(sizeof(int) * nparams);
	b->first = malloc(sizeof(int) * nparams);
	b->count = calloc((size_t)nparams, sizeof(int));
	b->pending = calloc((size_t)nparams, sizeof(int));
	b->elems = calloc((size_t)nparams, sizeof(size_t));
	if (!b->grads || !b->sizes || !b->bucket_of || !b->ready || !b->order || !b->first || !b->count ||
	    !b->pending || !b->elems) {
		comm_buckets_free(b);
		return -ENOMEM;
	}
	const size_t cap = bucket_bytes / sizeof(float);
	size_t maxe = 0;
	int nb = -1;
	for (int k = 0; k < nparams; k++) {
		int i = nparams - 1 - k;
		b->grads[i] = grads[i];
		b->sizes[i] = sizes[i];
		b->order[k] = i;
		if (nb < 0 || b->elems[nb] + sizes[i] > cap) {
			nb++;
			b->first[nb] = k;
		}
		b->bucket_of[i] = nb;
		b->count[nb]++;
		b->elems[nb] += sizes[i];
		if (b->elems[nb] > maxe)
			maxe = b->elems[nb];
	}
	b->nbuckets = nb + 1;
	for (int j = 0; j < b->nbuckets; j++)
		b->pending[j] = b->count[j];
	if (!(b->flat = malloc(maxe * sizeof(float)))) {
		comm_buckets_free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

static int reduce_bucket(CommBuckets *b, int j)
{
	size_t off = 0;
	for (int k = b->first[j]; k < b->first[j] + b->count[j]; k++) {
		int i = b->order[k];
		memcpy(b->flat + off, b->grads[i], b->sizes[i] * sizeof(float));
		off += b->sizes[i];
	}
	int rc = comm_allreduce_f32(b->comm, b->flat, off, COMM_AVG);
	if (rc < 0)
		return rc;
	off = 0;
	for (int k = b->first[j]; k < b->first[j] + b->count[j]; k++) {
		int i = b->order[k];
		memcpy(b->grads[i], b->flat + off, b->sizes[i] * sizeof(float));
		off += b->sizes[i];
	}
	return 0;
}

int comm_buckets_ready(CommBuckets *b, int param)
{
	if (!b || param < 0 || param >= b->nparams || b->ready[param])
		return -EINVAL;
	b->ready[param] = 1;
	b->pending[b->bucket_of[param]]--;
	while (b->next < b->nbuckets && b->pending[b->next] == 0) {
		int rc = reduce_bucket(b, b->next);
		if (rc < 0)
			return rc;
		b->next++;
	}
	return 0;
}

int comm_buckets_finish(CommBuckets *b)
{
	if (!b)
		return -EINVAL;
	if (b->next != b->nbuckets)
		return -EINVAL;
	b->next = 0;
	for (int j = 0; j < b->nbuckets; j++)
		b->pending[j] = b->count[j];
	memset(b->ready, 0, (size_t)b->nparams);
	return 0;
}

int comm_buckets_count(const CommBuckets *b)
{
	return b ? b->nbuckets : 0;
}
