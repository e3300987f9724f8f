// The self-check of a device backend (trainer --self-check, and before a device's first run): ops
// of the configured model on small shapes and one tiny training step, on the device and on the CPU
// backend, held to the twin tests' tolerances; a cache of passed checks per device and build.
#ifndef TRAINER_SELFCHECK_H
#define TRAINER_SELFCHECK_H
// defines: SelfCheckOptions, SelfCheckResult, SELFCHECK_TOL_BF16, SELFCHECK_TOL_F32, SELFCHECK_RATIO_ALL,
//          SELFCHECK_RATIO_ONE, trainer_selfcheck, selfcheck_cache_path, selfcheck_cache_hit, selfcheck_cache_store

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t

#include "kern_ops.h" // defines: KernCtx
#include "model.h"    // defines: ModelConfig

// relative L2 tolerances of one op's output by storage: the twin tests' KT_TOL_BF16 and KT_TOL_F32
// (tests/kcu_twin.h; test_trainer_selfcheck holds them equal)
#define SELFCHECK_TOL_BF16 1e-2
#define SELFCHECK_TOL_F32 1e-5
// the model step: the device's bf16 step against the CPU's f32 step, at most these times the CPU's
// own bf16 step's error (test_kcuda_model's KT_MODEL_RATIO_ALL and _ONE, which say why)
#define SELFCHECK_RATIO_ALL 2.0
#define SELFCHECK_RATIO_ONE 4.0

typedef struct {
	int act;       // the configured model's MLP activation (MODEL_ACT_*): the linear epilogue checked
	uint64_t seed; // inputs and weights
	// test-only planted bug: the device's output of the check of this name is perturbed after the op
	// ran, so that the mismatch path is seen to name it (NULL: none)
	const char *plant;
	int ops_only; // the ops alone, without the model step (a test's planted-bug runs)
	// test-only: only the op checks of the group that has the check of this name (NULL: all)
	const char *only;
	void (*line)(void *arg, const char *text); // one line per check (NULL: silent)
	void *arg;
} SelfCheckOptions;

typedef struct {
	int checks, failures;
	// the first failure: the op and tensor, its relative L2 error (NAN: the op failed to run, or a
	// determinism check: err is then the count of differing bytes) and the tolerance held to
	char op[96];
	double err, tol;
	char message[512]; // the first failure as one sentence
} SelfCheckResult;

// Runs every check on dev against cpu (the reference). 0 when all pass, 1 on a mismatch (r names the
// first), or -errno when the checks could not be set up (r->message says which). Library code: it
// prints nothing itself (o->line gets the lines).
int trainer_selfcheck(KernCtx *dev, KernCtx *cpu, const SelfCheckOptions *o, SelfCheckResult *r);

// The cache of passed self-checks: $XDG_CACHE_HOME/avclip/ (default ~/.cache/avclip/), one file per
// key (device, compute capability, driver, build id). path: the file for key; -ENOENT without a
// home to put it in.
int selfcheck_cache_path(const char *key, char *path, size_t len);
// 1 when path holds a pass for exactly key, 0 when absent, another key or malformed (parsed strictly)
int selfcheck_cache_hit(const char *path, const char *key);
// records a pass for key (temporary, then rename: never a file or link another user planted); -errno
int selfcheck_cache_store(const char *path, const char *key);

#endif
