// The trainer's self-check (trainer/trainer_selfcheck.h) on the CUDA backend through the CPU
// execution shim (or a device, as _gpu): it passes on the backend as built; a bug planted in one
// op's device output fails it, naming that op, its error and its tolerance; and the cache of
// passes is found only for its exact key, never through a link or a malformed file.
#include "kcu_twin.h"          // defines: KT_TOL_BF16, KT_TOL_F32
#include "trainer_selfcheck.h" // defines: trainer_selfcheck, selfcheck_cache_*

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(SELFCHECK_TOL_BF16 == KT_TOL_BF16 && SELFCHECK_TOL_F32 == KT_TOL_F32,
	       "the self-check holds ops to the twin tests' tolerances");

static int failures;

static void check(int ok, const char *what)
{
	printf("%-4s %s\n", ok ? "ok" : "FAIL", what);
	failures += !ok;
}

static void line(void *arg, const char *text)
{
	printf("  %s%s\n", (const char *)arg, text);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f)
		fputs(text, f), fclose(f);
}

static void cache_tests(void)
{
	char dir[] = "/tmp/test_selfcheck.XXXXXX", path[4096], other[4096];
	if (!mkdtemp(dir))
		return check(0, "mkdtemp");
	setenv("XDG_CACHE_HOME", dir, 1);
	const char *key = "NVIDIA H200 sm_90 driver CUDA 12.4 build 0123abcd";
	check(selfcheck_cache_path(key, path, sizeof path) == 0 && !strncmp(path, dir, strlen(dir)) &&
		      strstr(path, "/avclip/selfcheck-"),
	      "the cache lies under $XDG_CACHE_HOME/avclip/");
	check(selfcheck_cache_hit(path, key) == 0, "absent: no hit (the check runs)");
	check(selfcheck_cache_store(path, key) == 0, "a pass is stored");
	check(selfcheck_cache_hit(path, key) == 1, "the same key: a hit");
	check(selfcheck_cache_hit(path, "NVIDIA H200 sm_90 driver CUDA 12.4 build 0123abce") == 0,
	      "another build id in the same file: no hit");
	selfcheck_cache_path("another device", other, sizeof other);
	check(strcmp(other, path) != 0 && selfcheck_cache_hit(other, "another device") == 0,
	      "another key: another file, absent");
	char text[1200];
	snprintf(text, sizeof text, "avclip-selfcheck 1\nkey %s\nresult pass\nextra\n", key);
	write_file(path, text);
	check(selfcheck_cache_hit(path, key) == 0, "trailing bytes: malformed, no hit");
	snprintf(text, sizeof text, "avclip-selfcheck 1\nkey %s\nresult fail\n", key);
	write_file(path, text);
	check(selfcheck_cache_hit(path, key) == 0, "a result other than pass: no hit");
	char real[4200];
	snprintf(real, sizeof real, "%s.real", path);
	unlink(path);
	check(selfcheck_cache_store(real, key) == 0 && symlink(real, path) == 0, "a link planted at the path");
	check(selfcheck_cache_hit(path, key) == 0, "a link is never followed: no hit");
	check(selfcheck_cache_store(path, key) == 0 && selfcheck_cache_hit(path, key) == 1,
	      "storing replaces the link with a file");
	unlink(real), unlink(path);
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", dir, 1);
	check(selfcheck_cache_path(key, path, sizeof path) == 0 && strstr(path, "/.cache/avclip/selfcheck-"),
	      "without XDG_CACHE_HOME: ~/.cache/avclip/");
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		check(0, "removing the temporary folder");
}

int main(void)
{
	cache_tests();
	KernCtx *dev, *cpu;
	KCtxOptions o = {.backend = KERN_BACKEND_CUDA, .device = 0, .attention = KERN_ATTN_OWN};
	int rc = kern_ctx_create(&dev, &o);
	if (rc == -ENODEV) {
		printf("no CUDA device: skipped\n");
		return 77;
	}
	if (rc || kern_ctx_create_cpu(&cpu, 2))
		return printf("FAIL cannot open the backends: %d\n", rc), 1;
	SelfCheckOptions so = {.act = MODEL_ACT_GELU, .seed = 24, .line = line, .arg = ""};
	SelfCheckResult r;
	rc = trainer_selfcheck(dev, cpu, &so, &r);
	printf("%d checks, %d failed: %s\n", r.checks, r.failures, r.message);
	check(rc == 0 && r.failures == 0 && r.checks > 20, "the self-check passes on the backend as built");

	// a planted bug in each of a few ops: the first failure is that op, with its error and tolerance
	const char *planted[] = {"linear (bias, activation)",
				 "linear backward",
				 "layernorm",
				 "attention (own, causal)",
				 "augment",
				 "infonce",
				 "fcco v0 surrogate",
				 "fcco v2 local",
				 "fcco v3 scatter",
				 "clip metrics",
				 "temperature step",
				 "gradient norm",
				 "optimizer",
				 "softce",
				 "dropout"};
	for (size_t i = 0; i < sizeof planted / sizeof *planted; i++) {
		SelfCheckOptions po = {.act = MODEL_ACT_QUICKGELU,
				       .seed = 25 + i,
				       .plant = planted[i],
				       .ops_only = 1,
				       .only = planted[i]};
		rc = trainer_selfcheck(dev, cpu, &po, &r);
		printf("planted in %s: rc %d, %d failed, first: %s (error %.3e, tolerance %.0e)\n", planted[i], rc,
		       r.failures, r.message, r.err, r.tol);
		char what[200];
		snprintf(what, sizeof what, "a bug planted in %s fails the check, naming it", planted[i]);
		// a bit-exact output's tolerance is 0 bytes
		const int tol_ok = r.tol > 0 || (r.tol == 0 && strstr(r.message, "bit-exact"));
		check(rc == 1 && !strncmp(r.op, planted[i], strlen(planted[i])) && r.err > r.tol && tol_ok &&
			      strstr(r.message, planted[i]) && strstr(r.message, "tolerance"),
		      what);
	}
	SelfCheckOptions po = {
		.act = MODEL_ACT_GELU, .seed = 31, .plant = "model step", .line = line, .arg = "planted: "};
	rc = trainer_selfcheck(dev, cpu, &po, &r);
	printf("planted in the model step: rc %d, first: %s\n", rc, r.message);
	check(rc == 1 && !strncmp(r.op, "model step: ", 12), "a bug planted in the model step's gradients fails it");
	kern_ctx_destroy(dev);
	kern_ctx_destroy(cpu);
	printf("test_trainer_selfcheck: %s (%d failed checks)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
