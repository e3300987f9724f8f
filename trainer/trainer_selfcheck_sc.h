// The self-check's shared machinery (trainer_selfcheck.h): a tensor on both backends, the check's
// state, and what each op check uses to fill inputs, run an op on both and hold its outputs.
#ifndef TRAINER_SELFCHECK_SC_H
#define TRAINER_SELFCHECK_SC_H
// defines: ScPair, Sc, SH, NSH, sc_verdict, sc_setup_failed, sc_alloc, sc_pfree, sc_free_all, sc_set, sc_uniform, sc_fill,
//          sc_poison, sc_rel, sc_plant, sc_compare, sc_same_bits, sc_both, sc_reserve, sc_cpu_to_dev, sc_attn_short,
//          sc_check_linear, sc_check_layernorm, sc_check_attention, sc_check_augment, sc_check_loss,
//          sc_check_fcco, sc_check_metrics, sc_check_temp, sc_check_optimizer, sc_check_model_step,
//          sc_check_classify

#include "kern_ops.h"          // defines: KernCtx, KTensor, KDtype, KAct, KFccoVersion
#include "trainer_selfcheck.h" // defines: SelfCheckOptions, SelfCheckResult

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t, uint64_t

// one tensor on both backends
typedef struct {
	KTensor c, d;
} ScPair;

typedef struct {
	KernCtx *cpu, *dev;
	const SelfCheckOptions *o;
	SelfCheckResult *r;
	uint64_t rng;
	int setup_rc; // a failed allocation or copy: the check cannot go on
} Sc;

#define SH(...)                                                                                                        \
	(const int64_t[])                                                                                              \
	{                                                                                                              \
		__VA_ARGS__                                                                                            \
	}
#define NSH(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), SH(__VA_ARGS__)

// counts a check; the first failure is kept with its op, error and tolerance
void sc_verdict(Sc *s, const char *op, int ok, double err, double tol, const char *what);
// the check cannot go on (the first such failure is kept)
void sc_setup_failed(Sc *s, const char *what, int rc);
void sc_alloc(Sc *s, ScPair *p, KDtype dt, int ndim, const int64_t *shape);
void sc_pfree(Sc *s, ScPair *p);
void sc_free_all(Sc *s, ScPair **ps, size_t n);
// the same host bytes onto both
void sc_set(Sc *s, ScPair *p, const void *host);
// one draw uniform in [lo, hi) from the check's generator
double sc_uniform(Sc *s, double lo, double hi);
// uniform values in [lo, hi) on both (F32 or BF16); unit: rows of the last dim normalized
void sc_fill(Sc *s, ScPair *p, double lo, double hi, int unit);
// NaN bytes on both (an element an op does not write stays NaN and fails its comparison)
void sc_poison(Sc *s, ScPair *p);
// relative L2 of y (on yc) against x (on xc); NAN when a value is NaN or a download failed
double sc_rel(Sc *s, KernCtx *xc, const KTensor *x, KernCtx *yc, const KTensor *y);
// the planted bug (a test's): the device's output of check op moves by 0.25 of its scale
void sc_plant(Sc *s, const char *op, ScPair *p);
// one output of check op: planted bug, then held to the tolerance of its storage
void sc_compare(Sc *s, const char *op, const char *tensor, ScPair *p);
// one output of check op that must equal the CPU's to the bit (a copy, a table write, integer work)
void sc_same_bits(Sc *s, const char *op, const char *tensor, ScPair *p);
// the two calls of one op; 0 when both ran
int sc_both(Sc *s, const char *op, int rc_cpu, int rc_dev);
void sc_reserve(Sc *s, size_t wc, size_t wd);
// the CPU's bytes of t onto the device's copy, so that a backward compares alone
void sc_cpu_to_dev(Sc *s, ScPair *p);
// the attention implementation's short name ("own", "cudnn", "auto"; the CPU's whole description)
void sc_attn_short(const KernCtx *c, char *buf, size_t len);

// the checks, one op class each (trainer_selfcheck_ops.c, _loss.c, _step.c, _cls.c)
void sc_check_linear(Sc *s, KAct act);
void sc_check_layernorm(Sc *s);
void sc_check_attention(Sc *s, int causal);
void sc_check_augment(Sc *s);
void sc_check_loss(Sc *s);
void sc_check_fcco(Sc *s, KFccoVersion v);
void sc_check_metrics(Sc *s);
void sc_check_temp(Sc *s);
void sc_check_optimizer(Sc *s);
void sc_check_model_step(Sc *s, int act);
// classify's ops: soft-target CE, CutMix, drop path's row scale, dropout, the joint norm
void sc_check_classify(Sc *s);

#endif
