// Twin tests of the CUDA backend: every op runs on the CPU backend (the reference) and on the CUDA
// backend (a GPU, or the CPU execution shim in make test) from the same fresh random inputs, with
// outputs poisoned (NaN) first, and is compared by relative L2 under a tolerance named per tensor.
#ifndef KCU_TWIN_H
#define KCU_TWIN_H
// defines: KtEnv, KtPair, KT_TOL_BF16, KT_TOL_BF16_PRE, KT_TOL_F32, KT_TOL_F32_CHAIN, SH, NSH, KT_BOTH, KT_FREE, kt_both, kt_free_all, kt_setup, kt_reserve, kt_finish, kt_alloc, kt_fill, kt_fill_unit_rows,
//          kt_set, kt_poison, kt_compare, kt_same_bits, kt_same_bytes, kt_check, kt_sync, kt_rand, kt_uniform, kt_reschedule,
//          kt_free, kt_download_f64, kt_bits

#include "kern_ops.h" // defines: KernCtx, KTensor

#include <stdint.h>

// shapes as arguments: kern_alloc(c, t, dt, NSH(2, 3)) passes ndim and the shape
#define SH(...)                                                                                                        \
	(const int64_t[])                                                                                              \
	{                                                                                                              \
		__VA_ARGS__                                                                                            \
	}
#define NSH(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), SH(__VA_ARGS__)
// the same op on both backends: a non-zero return on either is a failed check (the two calls are
// arguments of one function: no order between them)
#define KT_BOTH(e, call_cpu, call_dev) kt_both((e), (call_cpu), (call_dev), __FILE__, __LINE__)
// frees every pair listed
#define KT_FREE(e, ...)                                                                                                \
	kt_free_all((e), (KtPair *[]){__VA_ARGS__}, (int)(sizeof((KtPair *[]){__VA_ARGS__}) / sizeof(KtPair *)))

// relative L2 tolerances by storage: bf16 outputs carry bf16 rounding, f32 ones only the order of sums
#define KT_TOL_BF16 1e-2
#define KT_TOL_F32 1e-5
// an f32 output summed from a bf16-stored intermediate carries that storage's rounding: the CUDA
// linear's din_bias with bf16 din sums the stored din (one product into din, then act' and the
// sums in one pass), the CPU the f32 values; measured up to 2.6e-3 over 8 seeds (test_kcuda_dense)
#define KT_TOL_BF16_PRE 1e-2
// f32 values at the end of a chain of ops (a model-shaped step: ~40 ops, a contrastive loss that
// multiplies similarity differences by 1/τ inside exp): measured up to 1.7e-5 over 25 seeds
#define KT_TOL_F32_CHAIN 1e-4

typedef struct {
	KernCtx *cpu, *dev;
	uint64_t seed, rng;
	int shim; // 1: the CUDA backend runs through the CPU execution shim
	int failures;
	const char *name;
} KtEnv;

// one tensor on both backends
typedef struct {
	KTensor c, d;
	const char *name;
} KtPair;

// prints the seed (test_seed.h: fixed per test, KT_SEED=n repeats a run), opens both backends (CUDA with its own attention
// kernel, KERN_ATTN_OWN); exits 77 when there is no CUDA device (a device build without a GPU)
void kt_setup(KtEnv *e, const char *name);
// workspace of at least bytes on both (kt_setup reserves the linear op's)
void kt_reserve(KtEnv *e, size_t bytes);
// closes both; returns the exit status (0 pass, 1 fail)
int kt_finish(KtEnv *e);
// another thread schedule of the shim's blocks (a no-op on a device)
void kt_reschedule(KtEnv *e, uint64_t seed);

uint64_t kt_rand(KtEnv *e);
double kt_uniform(KtEnv *e, double lo, double hi);

// allocates the pair (zero-filled on both); dies on failure
void kt_alloc(KtEnv *e, KtPair *p, const char *name, KDtype dt, int ndim, const int64_t *shape);
void kt_free(KtEnv *e, KtPair *p);
void kt_free_all(KtEnv *e, KtPair **ps, int n);
void kt_both(KtEnv *e, int rc_cpu, int rc_dev, const char *file, int line);
// fresh uniform values in [lo, hi) (bf16 tensors get bf16 values), the same on both backends
void kt_fill(KtEnv *e, KtPair *p, double lo, double hi);
// rows of the last dim normalized to unit length (features)
void kt_fill_unit_rows(KtEnv *e, KtPair *p);
// host bytes (kern_nbytes of the tensor) onto both
void kt_set(KtEnv *e, KtPair *p, const void *host);
// NaN bytes on both, so an element an op fails to write shows
void kt_poison(KtEnv *e, KtPair *p);
// the tensor's values as doubles (n = numel); which: 0 cpu, 1 dev. Caller frees.
double *kt_download_f64(KtEnv *e, KtPair *p, int which);
// relative L2 of dev against cpu, printed with the tensor's name; a failure is counted. tol <= 0:
// the tolerance of the tensor's dtype (KT_TOL_BF16 / KT_TOL_F32). Returns the error.
double kt_compare(KtEnv *e, KtPair *p, double tol);
// byte-identical on both backends (integer outputs, the augment op's exact table values)
int kt_same_bits(KtEnv *e, KtPair *p);
// a and b, two tensors of one backend (ctx), hold the same bytes (a run against a rerun of it)
int kt_same_bytes(KernCtx *ctx, const KTensor *a, const KTensor *b);
// a condition: printed and counted when false
void kt_check(KtEnv *e, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
// kern_sync on both; a latched error fails the test with its message
void kt_sync(KtEnv *e, const char *what);
// the dev tensor's raw bytes (caller frees), for run-to-run bit comparisons
void *kt_bits(KtEnv *e, const KTensor *t);

#endif
