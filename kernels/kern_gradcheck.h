// Test support for the CPU backend: deterministic fills, dot products and a central
// finite-difference gradient check, all on host-visible (CPU backend) f32/f64 tensors.
#ifndef KERN_GRADCHECK_H
#define KERN_GRADCHECK_H
// defines: kgc_fill, kgc_dot, kgc_get, kgc_set, kgc_check, kgc_maxdiff, kgc_alloc_like

#include "kern_ops.h" // defines: KernCtx, KTensor

#include <stdint.h>

// uniform(-scale, scale) from a counter-based hash of (seed, index): same values in f32 and f64
void kgc_fill(KTensor *t, uint64_t seed, double scale);
double kgc_get(const KTensor *t, int64_t i);
void kgc_set(KTensor *t, int64_t i, double v);
double kgc_dot(const KTensor *a, const KTensor *b);
// For every element of x: numeric = (f(x+h) - f(x-h)) / 2h against grad (the backward op's
// result). Prints the worst element; returns 0 when every |a-n| <= atol + rtol*|n|, else -1.
int kgc_check(const char *name, KTensor *x, const KTensor *grad, double (*f)(void *), void *arg, double h, double atol,
	      double rtol);
// max |a - b| / max(max|b|, 1e-30) over two tensors of equal numel (any float dtypes)
double kgc_maxdiff(const KTensor *a, const KTensor *b);
// a zeroed tensor of the same shape with the given dtype
int kgc_alloc_like(KernCtx *ctx, KTensor *out, const KTensor *like, KDtype dt);

#endif
