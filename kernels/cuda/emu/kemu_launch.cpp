// Kernel launches in the shim: the checks a CUDA launch makes (block and grid limits, the dynamic
// shared memory opt-in, the stream), then the blocks one after another on poisoned shared memory.
#include "kemu_impl.h" // defines: kemu_fibers_run_block, kemu_set_error, kemu_stream_ok, kemu_func_dyn_smem_limit,
		       //          kemu_sched_*

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

uint3 kemu::block_idx;
dim3 kemu::block_dim, kemu::grid_dim;

// every static __shared__ variable of the program (the linker names the section's bounds)
extern "C" char __start_kemu_shared[] __attribute__((weak));
extern "C" char __stop_kemu_shared[] __attribute__((weak));

// The limits of the device the shim stands for: an sm_90 card (H100/H200), the project's target.
enum { SMEM_DEFAULT = 48 * 1024, SMEM_OPTIN = 227 * 1024 };

static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER; // one OS thread runs fibers at a time
static struct {
	int configured, shuffle;
	uint64_t rng;
	char *dyn;
	size_t dyn_len, dyn_cap;
	char detail[1024];
} L;

static void configure_from_env()
{
	if (L.configured)
		return;
	const char *s = getenv("KEMU_SHUFFLE"), *seed = getenv("KEMU_SEED");
	L.shuffle = s && atoi(s) != 0;
	L.rng = seed ? strtoull(seed, nullptr, 0) : 1;
	L.configured = 1;
}

void kemu_config(int shuffle, uint64_t seed)
{
	pthread_mutex_lock(&launch_lock);
	L.configured = 1;
	L.shuffle = shuffle;
	L.rng = seed;
	pthread_mutex_unlock(&launch_lock);
}

extern "C" void kemu_config_c(int shuffle, uint64_t seed)
{
	kemu_config(shuffle, seed);
}

const char *kemu_fault_detail(void)
{
	return L.detail;
}

void *kemu::dyn_smem()
{
	return L.dyn;
}

bool kemu::in_shared(const void *p, size_t n)
{
	const char *c = (const char *)p;
	if (L.dyn && c >= L.dyn && c + n <= L.dyn + L.dyn_len)
		return true;
	return __start_kemu_shared && c >= __start_kemu_shared && c + n <= __stop_kemu_shared;
}

static cudaError_t refuse(cudaError_t e, const kemu::LaunchSite &site, const char *why)
{
	(void)site; // KLAUNCH names the kernel and its line
	snprintf(L.detail, sizeof L.detail, "%s", why);
	return kemu_set_error(e);
}

// The order blocks run in: linear when not shuffled, else i -> (a*i + c) mod n with a odd and
// coprime to n, a bijection that needs no table for grids of any size.
static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static uint64_t rand64()
{
	uint64_t z = (L.rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static cudaError_t run_blocks(dim3 grid, dim3 block, size_t smem, kemu::Body body, void *ctx,
			      const kemu::LaunchSite &site)
{
	if (smem > L.dyn_cap) {
		free(L.dyn);
		L.dyn = (char *)aligned_alloc(128, (smem + 127) & ~(size_t)127);
		L.dyn_cap = L.dyn ? smem : 0;
		if (!L.dyn)
			return refuse(cudaErrorMemoryAllocation, site, "no host memory for the dynamic shared memory");
	}
	L.dyn_len = smem;
	kemu::grid_dim = grid;
	kemu::block_dim = block;
	uint64_t n = (uint64_t)grid.x * grid.y * grid.z, a = 1, c = 0;
	if (L.shuffle && n > 1) {
		c = rand64() % n;
		do
			a = (rand64() % n) | 1;
		while (gcd(a, n) != 1);
	}
	if (kemu_check_launch_begin(site.kernel, grid, block, smem ? L.dyn : nullptr, smem))
		return refuse(cudaErrorMemoryAllocation, site, "no host memory for the checkers' shadow memory");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t b = (uint64_t)(((unsigned __int128)a * i + c) % n); // exact for grids of any size
		kemu::block_idx = make_uint3((unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y),
					     (unsigned)(b / ((uint64_t)grid.x * grid.y)));
		// shared memory starts undefined on a device: NaN-filled here, so reads before writes show
		if (__start_kemu_shared)
			memset(__start_kemu_shared, 0xff, (size_t)(__stop_kemu_shared - __start_kemu_shared));
		if (smem)
			memset(L.dyn, 0xff, smem);
		char msg[768];
		kemu_check_block_begin(b);
		kemu_async_block_begin(block.x * block.y * block.z);
		int rc = kemu_fibers_run_block(block, body, ctx, L.shuffle, &L.rng, msg, sizeof msg);
		int arc = kemu_async_block_end(rc ? nullptr : msg, rc ? 0 : sizeof msg);
		rc = rc ? rc : arc;
		kemu_check_block_end();
		if (rc)
			kemu_check_launch_end();
		if (rc == -ENOMEM)
			return refuse(cudaErrorMemoryAllocation, site, "no host memory for the fibers' stacks");
		if (rc) {
			snprintf(L.detail, sizeof L.detail, "%s", msg);
			return kemu_set_error(cudaErrorLaunchFailure);
		}
	}
	kemu_check_launch_end();
	return cudaSuccess;
}

static cudaError_t launch_now(const void *func, dim3 grid, dim3 block, size_t smem, kemu::Body body, void *ctx,
			      const kemu::LaunchSite &site)
{
	(void)func;
	pthread_mutex_lock(&launch_lock);
	configure_from_env();
	L.detail[0] = 0;
	cudaError_t e = run_blocks(grid, block, smem, body, ctx, site);
	pthread_mutex_unlock(&launch_lock);
	return e;
}

// a queued launch that fails says so when it runs: the call that returns its error comes later
static cudaError_t launch_queued(const void *func, dim3 grid, dim3 block, size_t smem, kemu::Body body, void *ctx,
				 const kemu::LaunchSite &site)
{
	cudaError_t e = launch_now(func, grid, block, smem, body, ctx, site);
	if (e)
		fprintf(stderr, "kemu: kernel %s (launched at %s:%d) failed: %s: %s\n", site.kernel, site.file,
			site.line, cudaGetErrorName(e), L.detail);
	return e;
}

cudaError_t kemu::run(const void *func, dim3 grid, dim3 block, size_t smem, cudaStream_t stream, Body body, void *ctx,
		      Body drop, const LaunchSite &site)
{
	std::shared_ptr<void> hold(ctx, drop); // the arguments, until the launch has run
	L.detail[0] = 0;
	uint64_t threads = (uint64_t)block.x * block.y * block.z;
	if (!block.x || !block.y || !block.z || block.x > 1024 || block.y > 1024 || block.z > 64 || threads > 1024)
		return refuse(cudaErrorInvalidConfiguration, site,
			      "block dimensions outside 1..1024 x 1..1024 x 1..64 "
			      "or more than 1024 threads");
	if (!grid.x || !grid.y || !grid.z || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
		return refuse(cudaErrorInvalidConfiguration, site,
			      "grid dimensions outside 1..2^31-1 x 1..65535 x 1..65535");
	if (smem > kemu_func_dyn_smem_limit(func))
		return refuse(cudaErrorInvalidValue, site,
			      smem > SMEM_OPTIN ? "dynamic shared memory above the device's 227 KiB"
						: "dynamic shared memory above 48 KiB without cudaFuncSetAttribute("
						  "cudaFuncAttributeMaxDynamicSharedMemorySize)");
	if (!kemu_stream_ok(stream))
		return refuse(cudaErrorInvalidResourceHandle, site, "not a stream");
	if (!kemu_sched_async())
		return launch_now(func, grid, block, smem, body, ctx, site);
	LaunchSite at = site;
	return kemu_set_error(kemu_sched_enqueue(kemu_stream_id(stream), site.kernel, [=]() {
		return launch_queued(func, grid, block, smem, body, hold.get(), at);
	}));
}
