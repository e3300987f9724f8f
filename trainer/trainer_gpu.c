// The trainer on a CUDA device (trainer_gpu.h): the versions and files of its CUDA stack, read
// from the libraries the process loaded, and the cached self-check of the device and this build.
#define _GNU_SOURCE
#include "trainer_dist.h"      // defines: trainer_dist_open_device
#include "trainer_gpu.h"       // defines: trainer_gpu_facts, trainer_gpu_selfcheck, trainer_self_check_mode
#include "trainer_selfcheck.h" // defines: trainer_selfcheck, selfcheck_cache_*

#include "log.h" // defines: log_info, log_warnx

#include <dlfcn.h>    // defines: dlsym, dladdr, dlopen, RTLD_DEFAULT, RTLD_NOLOAD
#include <elf.h>      // defines: ElfW note types, NT_GNU_BUILD_ID
#include <link.h>     // defines: dl_iterate_phdr, struct dl_phdr_info
#include <stdio.h>    // defines: snprintf, fopen, fgets
#include <string.h>   // defines: strstr, strlen, strcspn
#include <sys/stat.h> // defines: stat

// the loaded file that holds sym ("?" when the loader does not say)
static const char *file_of(void *sym)
{
	Dl_info info;
	return sym && dladdr(sym, &info) && info.dli_fname && info.dli_fname[0] ? info.dli_fname : "?";
}

static void *sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

// "maj.min.patch" of a version number maj·10000 + min·100 + patch (cuBLASLt, cuDNN 9, NCCL 2.19+)
static void v3(char *buf, size_t len, long v)
{
	snprintf(buf, len, "%ld.%ld.%ld", v / 10000, v / 100 % 100, v % 100);
}

// the kernel driver's version, from the NVIDIA module's own line ("... Kernel Module  550.54.15 ...")
static void driver_version(char *buf, size_t len)
{
	snprintf(buf, len, "?");
	FILE *f = fopen("/proc/driver/nvidia/version", "r");
	char line[512];
	if (f && fgets(line, sizeof line, f)) {
		const char *p = strstr(line, "Kernel Module");
		if (p) {
			p += strlen("Kernel Module");
			p += strspn(p, " \t");
			snprintf(buf, len, "%.*s", (int)strcspn(p, " \t\n"), p);
		}
	}
	if (f)
		fclose(f);
}

// the main program's GNU build id in hex; else its size and modification time (a rebuilt binary
// differs either way)
static int build_id_note(struct dl_phdr_info *info, size_t size, void *arg)
{
	char *out = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *desc = p + sizeof *n + ((n->n_namesz + 3) & ~3u);
			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(p + sizeof *n, "GNU", 4)) {
				for (unsigned k = 0; k < n->n_descsz && k < 32; k++)
					snprintf(out + 2 * k, 3, "%02x", desc[k]);
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1; // the first object is the program: stop there
}

static void build_id(char *buf, size_t len)
{
	char hex[72] = "";
	dl_iterate_phdr(build_id_note, hex);
	struct stat st;
	if (hex[0])
		snprintf(buf, len, "%s", hex);
	else if (stat("/proc/self/exe", &st) == 0)
		snprintf(buf, len, "size%lld-mtime%lld", (long long)st.st_size, (long long)st.st_mtime);
	else
		snprintf(buf, len, "unknown");
}

void trainer_gpu_facts(int device, char *key, size_t keylen)
{
	int (*rt_ver)(int *) = (int (*)(int *))sym("cudaRuntimeGetVersion");
	int (*drv_ver)(int *) = (int (*)(int *))sym("cudaDriverGetVersion");
	int (*attr)(int *, int, int) = (int (*)(int *, int, int))sym("cudaDeviceGetAttribute");
	size_t (*lt_ver)(void) = (size_t(*)(void))sym("cublasLtGetVersion");
	size_t (*dnn_ver)(void) = (size_t(*)(void))sym("cudnnGetVersion");
	int (*nccl_ver)(int *) = (int (*)(int *))sym("ncclGetVersion");
	// the device's name is the driver API's (libcuda, which the runtime loaded for itself)
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	int (*dev_get)(int *, int) = cuda ? (int (*)(int *, int))dlsym(cuda, "cuDeviceGet") : NULL;
	int (*dev_name)(char *, int, int) = cuda ? (int (*)(char *, int, int))dlsym(cuda, "cuDeviceGetName") : NULL;
	char name[256] = "?", drv[64], rt[32] = "not loaded", lt[32] = "not loaded", dnn[32] = "not loaded",
	     nc[32] = "not loaded", bid[80];
	int cu = 0, maj = 0, min = 0, v = 0;
	if (dev_get && dev_name && dev_get(&cu, device) == 0 && dev_name(name, sizeof name, cu) != 0)
		snprintf(name, sizeof name, "?");
	// cudaDevAttrComputeCapabilityMajor and _Minor (75, 76: the runtime's ABI)
	if (attr && (attr(&maj, 75, device) || attr(&min, 76, device)))
		maj = min = 0;
	driver_version(drv, sizeof drv);
	if (drv_ver && drv_ver(&v) == 0)
		snprintf(drv + strlen(drv), sizeof drv - strlen(drv), " (CUDA %d.%d)", v / 1000, v % 1000 / 10);
	if (rt_ver && rt_ver(&v) == 0)
		snprintf(rt, sizeof rt, "%d.%d", v / 1000, v % 1000 / 10);
	if (lt_ver)
		v3(lt, sizeof lt, (long)lt_ver());
	if (dnn_ver)
		v3(dnn, sizeof dnn, (long)dnn_ver());
	if (nccl_ver && nccl_ver(&v) == 0)
		v3(nc, sizeof nc, v);
	build_id(bid, sizeof bid);
	log_info("device %d: %s, compute capability %d.%d, driver %s (libcuda %s)", device, name, maj, min, drv,
		 dev_name ? file_of((void *)dev_name) : "not loaded");
	log_info("CUDA runtime %s from %s", rt, rt_ver ? file_of((void *)rt_ver) : "-");
	log_info("cuBLASLt %s from %s", lt, lt_ver ? file_of((void *)lt_ver) : "-");
	log_info("cuDNN %s from %s", dnn, dnn_ver ? file_of((void *)dnn_ver) : "-");
	log_info("NCCL %s from %s", nc, nccl_ver ? file_of((void *)nccl_ver) : "-");
	snprintf(key, keylen, "%s|sm_%d%d|driver %s|cudart %s|cublasLt %s|cudnn %s|build %s", name, maj, min, drv, rt,
		 lt, dnn, bid);
}

static void line(void *arg, const char *text)
{
	log_info("self-check: %s", text);
}

int trainer_gpu_selfcheck(const TrainerConfig *c, KernCtx *dev, int always, char *err, size_t errlen)
{
	char base[900], key[1100], path[4096];
	trainer_gpu_facts(kern_ctx_device(dev), base, sizeof base);
	char impl[32];
	snprintf(impl, sizeof impl, "%s", kern_ctx_attention(dev));
	impl[strcspn(impl, ":")] = 0;
	// what is checked depends on the attention implementation and the MLP's activation too
	snprintf(key, sizeof key, "%s|attention %s|act %d", base, impl, c->model.act);
	const int have_path = selfcheck_cache_path(key, path, sizeof path) == 0;
	if (!always && have_path && selfcheck_cache_hit(path, key) == 1) {
		log_info("self-check: passed before on this device and build (%s): not repeated (--self-check runs it)",
			 path);
		return 0;
	}
	KernCtx *cpu;
	int rc = kern_ctx_create_cpu(&cpu, 0);
	if (rc < 0) {
		snprintf(err, errlen, "self-check: cannot open the CPU backend it compares against: %s", strerror(-rc));
		return -1;
	}
	log_info("self-check: every op class of the model on small shapes and one tiny training step, on %s against "
		 "the CPU backend",
		 kern_ctx_backend_name(dev));
	SelfCheckOptions o = {.act = c->model.act, .seed = 24, .line = c->self_check ? line : NULL};
	SelfCheckResult r;
	rc = trainer_selfcheck(dev, cpu, &o, &r);
	kern_ctx_destroy(cpu);
	kern_error_clear(dev);
	static const char report[] =
		"the trainer refuses to train on results it cannot trust: run tools/gpu-check.sh and attach its "
		"output, with this message, to an issue";
	if (rc < 0) {
		snprintf(err, errlen, "%s; %s", r.message, report);
		return -1;
	}
	if (rc > 0) {
		snprintf(err, errlen, "self-check FAILED (%d of %d checks): %s; %s", r.failures, r.checks, r.message,
			 report);
		return -1;
	}
	log_info("self-check: passed (%d checks)", r.checks);
	if (!have_path)
		log_warnx(
			"self-check: no cache folder (neither XDG_CACHE_HOME nor HOME is set): it runs on every start");
	else if ((rc = selfcheck_cache_store(path, key)) < 0)
		log_warnx("self-check: cannot record the pass in %s: %s", path, strerror(-rc));
	return 0;
}

int trainer_self_check_mode(const TrainerConfig *c)
{
	if (strcmp(c->backend, "cuda")) {
		log_info(
			"--self-check: nothing to check on the %s backend: it is the reference the device backends are "
			"checked against",
			c->backend);
		return 0;
	}
	char why[96], err[1024];
	KernCtx *dev;
	if (trainer_dist_open_device(c, 1, &dev, why, sizeof why, err, sizeof err) < 0) {
		log_error("%s", err);
		return 1;
	}
	log_info("--self-check on %s", why);
	int rc = trainer_gpu_selfcheck(c, dev, 1, err, sizeof err);
	kern_ctx_destroy(dev);
	if (rc < 0)
		log_error("%s", err);
	return rc < 0 ? 1 : 0;
}
