// Argument checks the front end applies before any backend runs an op (private to kernels/):
// the dtype class of each argument, element counts, the latched error and the workspace.
#ifndef KERN_CHECK_H
#define KERN_CHECK_H
// defines: kchk_cdt, kchk_act, kchk_stat, kchk_typed, kchk_grad, KPRE, KCK, KWS

#include "kern_backend.h" // defines: struct KernCtx, kern_latched

#include <errno.h>

// the compute dtype of an op from its first ACT argument: the f64 path or f32
static inline KDtype kchk_cdt(const KTensor *t)
{
	return t && t->dtype == KDT_F64 ? KDT_F64 : KDT_F32;
}

// an ACT tensor of n elements: F32 or BF16 storage (F64 in the f64 path)
static inline int kchk_act(const KTensor *t, KDtype cdt, int64_t n)
{
	if (!t || !t->data || kern_numel(t) != n)
		return 0;
	return cdt == KDT_F64 ? t->dtype == KDT_F64 : (t->dtype == KDT_F32 || t->dtype == KDT_BF16);
}

// a STAT tensor of n elements: F32 (F64 in the f64 path)
static inline int kchk_stat(const KTensor *t, KDtype cdt, int64_t n)
{
	return t && t->data && kern_numel(t) == n && t->dtype == cdt;
}

static inline int kchk_typed(const KTensor *t, KDtype dt, int64_t n)
{
	return t && t->data && t->dtype == dt && kern_numel(t) == n;
}

// a gradient output: absent, or an ACT tensor of n elements
static inline int kchk_grad(KGrad g, KDtype cdt, int64_t n)
{
	return !g.t || kchk_act(g.t, cdt, n);
}

// every op's prologue: a context, no latched error, a compute dtype the backend has
#define KPRE(c, cdt)                                                                                                   \
	do {                                                                                                           \
		if (!(c))                                                                                              \
			return -EINVAL;                                                                                \
		int e_ = kern_latched(c);                                                                              \
		if (e_)                                                                                                \
			return e_;                                                                                     \
		if ((cdt) == KDT_F64 && !(c)->dev->be->has_f64)                                                        \
			return -ENOTSUP;                                                                               \
	} while (0)

#define KCK(cond)                                                                                                      \
	do {                                                                                                           \
		if (!(cond))                                                                                           \
			return -EINVAL;                                                                                \
	} while (0)

// the op needs `need` bytes of the stream's workspace
#define KWS(c, need)                                                                                                   \
	do {                                                                                                           \
		if ((size_t)(need) > (c)->ws_bytes)                                                                    \
			return -ENOSPC;                                                                                \
	} while (0)

#endif
