// Argument checks the front end applies before any backend runs an op (private to kernels/):
// the dtype class of each argument, element counts, the latched error and the workspace.
#ifndef KERN_CHECK_H
#define KERN_CHECK_H
// defines: kchk_cdt, kchk_act, kchk_stat, kchk_typed, kchk_grad, KPRE, KCK, KWS, KRUN, kplan, kplan_t,
//          kplan_g

#include "kern_backend.h" // defines: struct KernCtx, kern_latched, KPlanOp

#include <errno.h>
#include <stdarg.h> // defines: va_list
#include <stdio.h>  // defines: vsnprintf

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

// an argument check: refused, the op returns -EINVAL and kern_refusal() names the function and check
#define KCK(cond)                                                                                                      \
	do {                                                                                                           \
		if (!(cond))                                                                                           \
			return kern_refuse(__func__, #cond);                                                           \
	} while (0)

// the op needs `need` bytes of the stream's workspace
#define KWS(c, need)                                                                                                   \
	do {                                                                                                           \
		if ((size_t)(need) > (c)->ws_bytes)                                                                    \
			return -ENOSPC;                                                                                \
	} while (0)

// ---- the plan recorder (kern_ctx_set_plan) ----
// bytes of a tensor (0: absent), of a gradient output (written, and read when it accumulates)
static inline double kplan_t(const KTensor *t)
{
	return t && t->data ? (double)kern_nbytes(t) : 0;
}

static inline double kplan_g(KGrad g)
{
	return kplan_t(g.t) * (g.acc ? 2 : 1);
}

static inline KPlanOp kplan(const char *op, double flops, double bytes, int gemm, double recompute, const char *fmt,
			    ...) __attribute__((format(printf, 6, 7)));
static inline KPlanOp kplan(const char *op, double flops, double bytes, int gemm, double recompute, const char *fmt,
			    ...)
{
	KPlanOp o = {.op = op, .flops = flops, .bytes = bytes, .gemm = gemm, .recompute = recompute};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o.shape, sizeof o.shape, fmt, ap);
	va_end(ap);
	return o;
}

// the op's backend call, reported to the device's recorder when one is set: `rec` (a kplan(...)
// expression) is evaluated only then, the call not at all in a dry run
#define KRUN(c, rec, call)                                                                                             \
	({                                                                                                             \
		KernCtx *const c_ = (c);                                                                               \
		int r_;                                                                                                \
		if (!c_->dev->plan) {                                                                                  \
			r_ = (call);                                                                                   \
		} else {                                                                                               \
			const int64_t l0_ = kern_ctx_launches(c_);                                                     \
			r_ = c_->dev->plan_dry ? 0 : (call);                                                           \
			KPlanOp o_ = rec;                                                                              \
			o_.launches = kern_ctx_launches(c_) - l0_;                                                     \
			c_->dev->plan(c_->dev->plan_arg, &o_);                                                         \
		}                                                                                                      \
		r_;                                                                                                    \
	})

#endif
