// kgemm under the execution shim: device memory is host memory, so the handle's GEMM is the
// reference (kgemm_ref.c) run at once; the workspace is only accounted for.
#include "kgemm.h" // defines: KGemm, kgemm_create, kgemm_destroy, kgemm, kgemm_ref

#include <errno.h>
#include <stdlib.h>

struct KGemm {
	size_t ws_bytes;
};

int kgemm_create(KGemm **out, size_t ws_bytes, KErr *e)
{
	*out = calloc(1, sizeof **out);
	if (!*out)
		return kerr_set(e, -ENOMEM, "kgemm_create: no memory");
	(*out)->ws_bytes = ws_bytes ? ws_bytes : (size_t)32 << 20;
	return 0;
}

void kgemm_destroy(KGemm *g)
{
	free(g);
}

int kgemm(KGemm *g, void *stream, const KgCall *c, KErr *e)
{
	(void)stream; // the shim runs everything at once, in issue order
	if (!g)
		return kerr_set(e, -EINVAL, "kgemm: no handle");
	int rc = kgemm_ref(c, e);
	if (!rc)
		kcheck_count_launch(); // as the device's kgemm counts a queued matmul
	return rc;
}
