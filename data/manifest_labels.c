// The manifest's class labels (version 3): the labels section's check at open, on the bytes
// alone (so the reader validates it like every other table), and the accessors tools, the loader
// and the trainer read heads, class names and each sample's labels with.
#include "manifest.h" // defines: manifest_header, manifest_string, manifest_label_*, manifest_labels_check
#include "errbuf.h"   // defines: err_fmt

#include <errno.h>  // defines: EBADMSG
#include <string.h> // defines: strlen

uint64_t manifest_labels_bytes(const ManifestHeader *h)
{
	return sizeof(ManifestHead) * MANIFEST_MAX_HEADS + h->n_samples * MANIFEST_MAX_HEADS * sizeof(int32_t);
}

static const ManifestHead *heads_of(const ManifestHeader *h)
{
	return (const ManifestHead *)((const uint8_t *)h + h->labels_off);
}

static const int32_t *labels_of(const ManifestHeader *h)
{
	return (const int32_t *)(heads_of(h) + MANIFEST_MAX_HEADS);
}

// head k's record: names in the string table (table terminated, checked before), a class count
static int check_head(const ManifestHeader *h, uint32_t k, char *err, size_t errlen)
{
	const ManifestHead *d = &heads_of(h)[k];
	const char *str = (const char *)h + h->strings_off;
	if (k >= h->n_heads)
		return d->name_off || d->classes_off || d->n_classes || d->n_named
			       ? err_fmt(err, errlen, -EBADMSG, "label head %u: a record beyond the %u heads", k,
					 h->n_heads)
			       : 0;
	if (d->name_off >= h->strings_size || d->n_classes < 1 || d->n_classes > MANIFEST_MAX_CLASSES ||
	    (d->n_named && d->n_named != d->n_classes))
		return err_fmt(err, errlen, -EBADMSG,
			       "label head %u: name out of range, or %u classes (1..%u) with %u names (0 or all)", k,
			       d->n_classes, MANIFEST_MAX_CLASSES, d->n_named);
	uint64_t off = d->classes_off;
	for (uint32_t c = 0; c < d->n_named; c++, off += strlen(str + off) + 1)
		if (off >= h->strings_size)
			return err_fmt(err, errlen, -EBADMSG, "label head %u: class %u's name lies outside the strings",
				       k, c);
	return 0;
}

int manifest_labels_check(const ManifestHeader *h, char *err, size_t errlen)
{
	if (h->version < 3)
		return 0;
	if (h->n_heads < 1 || h->n_heads > MANIFEST_MAX_HEADS)
		return err_fmt(err, errlen, -EBADMSG, "version %u with %u label heads (1..%u)", h->version, h->n_heads,
			       MANIFEST_MAX_HEADS);
	for (uint32_t k = 0; k < MANIFEST_MAX_HEADS; k++)
		TRY(check_head(h, k, err, errlen));
	const ManifestHead *d = heads_of(h);
	const int32_t *lab = labels_of(h);
	for (uint64_t i = 0; i < h->n_samples; i++)
		for (uint32_t k = 0; k < MANIFEST_MAX_HEADS; k++) {
			int32_t v = lab[i * MANIFEST_MAX_HEADS + k];
			int64_t lim = k < h->n_heads ? d[k].n_classes : 0;
			if (v != MANIFEST_NO_LABEL && (v < 0 || v >= lim))
				return err_fmt(
					err, errlen, -EBADMSG,
					"sample %llu: label %d of head %u outside its %lld classes (or -1: none)",
					(unsigned long long)i, (int)v, k, (long long)lim);
		}
	return 0;
}

uint32_t manifest_label_heads(const Manifest *m)
{
	const ManifestHeader *h = manifest_header(m);
	return h->version >= 3 ? h->n_heads : 0;
}

uint32_t manifest_label_classes(const Manifest *m, uint32_t head)
{
	return head < manifest_label_heads(m) ? heads_of(manifest_header(m))[head].n_classes : 0;
}

const char *manifest_label_head_name(const Manifest *m, uint32_t head)
{
	return head < manifest_label_heads(m) ? manifest_string(m, heads_of(manifest_header(m))[head].name_off) : "";
}

const char *manifest_label_class_name(const Manifest *m, uint32_t head, uint32_t cls)
{
	if (head >= manifest_label_heads(m))
		return NULL;
	const ManifestHead *d = &heads_of(manifest_header(m))[head];
	if (cls >= d->n_named)
		return NULL;
	uint64_t off = d->classes_off; // validated at open: every name lies in the string table
	for (uint32_t c = 0; c < cls; c++)
		off += strlen(manifest_string(m, off)) + 1;
	return manifest_string(m, off);
}

void manifest_labels(const Manifest *m, uint64_t sample, int32_t out[MANIFEST_MAX_HEADS])
{
	const ManifestHeader *h = manifest_header(m);
	for (uint32_t k = 0; k < MANIFEST_MAX_HEADS; k++)
		out[k] = manifest_label_heads(m) && sample < h->n_samples
				 ? labels_of(h)[sample * MANIFEST_MAX_HEADS + k]
				 : MANIFEST_NO_LABEL;
}
