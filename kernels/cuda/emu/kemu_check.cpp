// The shim's checkers of a kernel's memory accesses: what compute-sanitizer's racecheck and
// initcheck would say, on the CPU, for every launch of an instrumented kernel.
//
// Design note. The kernels' .cu files are compiled with g++'s ThreadSanitizer instrumentation
// (-fsanitize=thread, see module.mk) but linked without its runtime: every load and store of a
// kernel calls __tsan_readN / __tsan_writeN, which this file defines. While a block runs on this
// OS thread (`on`, thread-local: host code of the same files on other threads is not looked at)
// an access is checked when it falls in shared memory (the static __shared__ section or the
// dynamic block) or, for writes, in memory from cudaMalloc:
// - shared memory keeps per byte its last writer and its last two readers, each as (epoch, thread,
//   __syncwarp generation of the thread's warp). The epoch counts barriers (and blocks), so
//   nothing is cleared between them. Two accesses of different threads in the same epoch conflict
//   (write-write, read-write, write-read) unless both threads are in one warp and a __syncwarp of
//   that warp came between them (only __syncwarp orders memory, as in PTX's memory model). A read
//   of a byte no thread of the block wrote is an uninitialized read (shared memory starts
//   undefined). The first conflict ends the block with a fault naming the kernel, both threads,
//   both accesses and the offset, so the launch fails as for any other broken rule.
// - device memory keeps per byte (a shadow mapped at the first kernel write to an allocation)
//   the serial number of the block that last wrote it: a write by another block of the same
//   launch is a conflict. Atomics are not instrumented (kemu.h) and are never conflicts.
// - with asynchronous streams (kemu_sched.cpp) device memory also keeps, per 4 bytes, the last op
//   that wrote them and the last that read them, each as (stream, that stream's clock): an access
//   by an op whose vector clock does not cover them (no event wait, stream order or host wait in
//   between) is a stream-order race, reported on stderr with both ops; the op then fails.
// Guarantees: a conflict is reported whatever the thread order, in order mode as well (a missing
// barrier no longer depends on the shuffle to show). Not seen: accesses in library calls
// (memcpy, memset of a variable size), in uninstrumented code, races through global memory
// inside one block, and a read that two or more other threads' reads pushed out of the record.
#include "kemu_impl.h" // defines: kemu_check_*

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

// every static __shared__ variable of the program (the linker names the section's bounds)
extern "C" char __start_kemu_shared[] __attribute__((weak));
extern "C" char __stop_kemu_shared[] __attribute__((weak));

namespace
{

struct Acc { // one access: epoch 0 is "never"
	uint32_t epoch;
	uint32_t tid : 10, gen : 22; // linear thread index, its warp's __syncwarp count (mod 2^22)
};
struct ShByte {
	Acc w, r, r2; // last writer; last reader, and an earlier one of another thread (of another warp if any)
};
struct Alloc {
	uintptr_t lo, hi;
	uint32_t *shadow; // block serial of the last kernel write per byte, NULL until the first one
	size_t shadow_bytes;
	struct OrdCell *ord; // per 4 bytes: the last writing and reading op, NULL until the first access
	size_t ord_bytes;
};
struct OrdCell {
	uint64_t w, r; // (stream + 1) << 48 | the stream's clock; 0: none
};
enum { ORDER_BIT = 8, ORD_NAMES = 1024 }; // `on` while an op of an asynchronous stream runs

__thread unsigned on; // KEMU_CHECK_* of the block running on this OS thread, 0 outside blocks

struct {
	int configured;
	unsigned which;
	// shared memory
	uintptr_t st_lo, st_len, dyn_lo, dyn_len;
	ShByte *st_sh, *dyn_sh;
	size_t dyn_sh_cap;
	uint32_t epoch, block_base;
	uint32_t gen[32]; // __syncwarp releases per warp
	// device memory
	Alloc *allocs; // sorted by lo
	int nalloc, capalloc;
	uint64_t table_gen; // counts changes of the table (allocs' indices)
	uint32_t launch_base, serial, next_base;
	bool global_ok;
	uintptr_t stk_lo, stk_len; // the fibers' stacks: never device memory
	// the launch
	const char *kernel;
	dim3 block;
} C;

pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER; // the table; held for a whole launch

// Without the instrumentation's entry points (a sanitizer build: module.mk) the kernels' own
// loads and stores are never seen, so the shim's explicit calls (ldmatrix, atomics) would find
// shared memory "never written": no checker is on there.
#if KEMU_CHECK_RUNTIME
constexpr unsigned AVAILABLE = KEMU_CHECK_ALL;
#else
constexpr unsigned AVAILABLE = 0;
#endif

void configure()
{
	if (C.configured)
		return;
	const char *e = getenv("KEMU_CHECKS");
	C.which = e ? (unsigned)strtoul(e, nullptr, 0) & KEMU_CHECK_ALL : (unsigned)KEMU_CHECK_ALL;
	C.which &= AVAILABLE;
	C.epoch = C.block_base = C.next_base = 1; // 0 is "never"
	C.configured = 1;
}

// "thread (x,y,z)" of a linear index
void thread_name(char *b, size_t n, unsigned lin)
{
	unsigned x = C.block.x, y = C.block.y;
	snprintf(b, n, "thread (%u,%u,%u)", lin % x, lin / x % y, lin / (x * y));
}

// where the access is, for addr2line: "program+0xoffset"
void pc_name(char *b, size_t n, const void *pc)
{
	Dl_info di;
	if (pc && dladdr(pc, &di) && di.dli_fname)
		snprintf(b, n, "%s+0x%lx", di.dli_fname, (unsigned long)((uintptr_t)pc - (uintptr_t)di.dli_fbase));
	else
		snprintf(b, n, "%p", pc);
}

bool concurrent(const Acc &a, unsigned me)
{
	if (a.epoch != C.epoch || (unsigned)a.tid == me)
		return false;
	return ((unsigned)a.tid >> 5) != (me >> 5) || (unsigned)a.gen == (C.gen[me >> 5] & 0x3fffff);
}

[[noreturn]] void shared_fault(const char *what, uintptr_t a, size_t n, bool write, const Acc *other, bool other_wrote,
			       const void *pc)
{
	bool dyn = a - C.dyn_lo < C.dyn_len;
	uintptr_t off = a - (dyn ? C.dyn_lo : C.st_lo);
	char where[96], who[48] = "", site[256];
	snprintf(where, sizeof where, "%s shared memory at offset %lu (%p)", dyn ? "dynamic" : "static",
		 (unsigned long)off, (void *)a);
	if (other)
		thread_name(who, sizeof who, other->tid);
	pc_name(site, sizeof site, pc);
	if (other)
		kemu::fault("%s in kernel %s: %s %zu bytes of %s that %s %s since the last __syncthreads (no barrier "
			    "between; pc %s)",
			    what, C.kernel, write ? "writes" : "reads", n, where, who, other_wrote ? "wrote" : "read",
			    site);
	kemu::fault("%s in kernel %s: reads %zu bytes of %s that no thread of the block wrote (shared memory "
		    "starts undefined; pc %s)",
		    what, C.kernel, n, where, site);
}

// one byte's record against the access of thread `me`, then the access recorded
inline void shared_byte(ShByte &s, const Acc &mine, unsigned me, uintptr_t a, size_t n, bool write, const void *pc)
{
	if (!write) {
		if ((on & KEMU_CHECK_INIT) && s.w.epoch < C.block_base)
			shared_fault("uninitialized shared-memory read", a, n, false, nullptr, false, pc);
		if ((on & KEMU_CHECK_RACE) && concurrent(s.w, me))
			shared_fault("shared-memory race (read after write)", a, n, false, &s.w, true, pc);
		if (s.r.epoch == C.epoch && (unsigned)s.r.tid != me &&
		    (((unsigned)s.r.tid >> 5) != (me >> 5) || s.r2.epoch != C.epoch))
			s.r2 = s.r;
		s.r = mine;
	} else {
		if (on & KEMU_CHECK_RACE) {
			if (concurrent(s.w, me))
				shared_fault("shared-memory race (write after write)", a, n, true, &s.w, true, pc);
			if (concurrent(s.r, me))
				shared_fault("shared-memory race (write after read)", a, n, true, &s.r, false, pc);
			if (concurrent(s.r2, me))
				shared_fault("shared-memory race (write after read)", a, n, true, &s.r2, false, pc);
		}
		s.w = mine;
	}
}

inline bool same(const ShByte &x, const ShByte &y)
{
	return !memcmp(&x, &y, sizeof x);
}

void shared_access(ShByte *sh, uintptr_t a, size_t n, bool write, const void *pc)
{
	unsigned me = kemu::cur->linear;
	Acc mine = {C.epoch, me, C.gen[me >> 5] & 0x3fffff};
	// the bytes of a word usually share one history: checked once, each then gets the result
	ShByte first = sh[0];
	shared_byte(sh[0], mine, me, a, n, write, pc);
	for (size_t i = 1; i < n; i++) {
		if (same(sh[i], first))
			sh[i] = sh[0];
		else
			shared_byte(sh[i], mine, me, a, n, write, pc);
	}
}

// the op that runs: its stream and clock; recent ops' names, for the reports
struct {
	int stream;
	const KemuVClock *vc;
	uint64_t me;
	const char *name;
	bool failed;
	int reports;
	const char *names[KEMU_NSTREAM][ORD_NAMES];
	uint64_t name_clk[KEMU_NSTREAM][ORD_NAMES];
} O;
__thread unsigned order_on; // ORDER_BIT while an op runs on this thread

int find_alloc(uintptr_t a)
{
	int lo = 0, hi = C.nalloc;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (C.allocs[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < C.nalloc && a >= C.allocs[lo].lo ? lo : -1;
}

// the allocation a lies in (-1: none): a kernel uses several in turn, so the last few found are
// tried before the search
int alloc_of(uintptr_t a)
{
	static int recent[4] = {-1, -1, -1, -1}, next;
	static uint64_t gen_seen;
	if (gen_seen != C.table_gen) { // the table changed: indices may have moved
		recent[0] = recent[1] = recent[2] = recent[3] = -1;
		gen_seen = C.table_gen;
	}
	for (int k : recent)
		if (k >= 0 && a - C.allocs[k].lo < C.allocs[k].hi - C.allocs[k].lo)
			return k;
	if (a - C.stk_lo < C.stk_len || !C.nalloc || a < C.allocs[0].lo || a >= C.allocs[C.nalloc - 1].hi)
		return -1; // a fiber's stack, or outside every allocation
	int k = find_alloc(a);
	if (k >= 0)
		recent[next++ & 3] = k;
	return k;
}

void global_write(uintptr_t a, size_t n, const void *pc)
{
	int k = alloc_of(a);
	if (k < 0)
		return;
	Alloc &al = C.allocs[k];
	if (!al.shadow) {
		size_t bytes = (al.hi - al.lo) * sizeof(uint32_t);
		void *m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			       0);
		if (m == MAP_FAILED)
			return; // unchecked rather than failed: the checker is no reason to stop a kernel
		al.shadow = (uint32_t *)m;
		al.shadow_bytes = bytes;
	}
	if (n > al.hi - a)
		n = al.hi - a;
	uint32_t *s = al.shadow + (a - al.lo);
	for (size_t i = 0; i < n; i++) {
		uint32_t t = s[i];
		if (t >= C.launch_base && t != C.serial) {
			uint32_t b = t - C.launch_base;
			dim3 g = kemu::grid_dim;
			char site[256];
			pc_name(site, sizeof site, pc);
			kemu::fault("global-memory write conflict in kernel %s: writes %zu bytes at offset %lu of a "
				    "%lu-byte cudaMalloc block (%p) that block (%u,%u,%u) wrote in the same launch "
				    "(blocks are unordered; pc %s)",
				    C.kernel, n, (unsigned long)(a - al.lo), (unsigned long)(al.hi - al.lo), (void *)a,
				    b % g.x, b / g.x % g.y, b / (g.x * g.y), site);
		}
		s[i] = C.serial;
	}
}

bool ordered(uint64_t tag)
{
	return !tag || tag == O.me || O.vc->c[(tag >> 48) - 1] >= (tag & 0xffffffffffffull);
}

void order_report(const Alloc &al, uintptr_t a, size_t n, bool write, uint64_t other, bool other_wrote, const void *pc)
{
	bool first = !O.failed;
	O.failed = true;
	if (!first || O.reports++ >= 8) // the first race of an op, of the first 8 ops
		return;
	int s = (int)(other >> 48) - 1;
	uint64_t clk = other & 0xffffffffffffull;
	const char *who = O.name_clk[s][clk % ORD_NAMES] == clk ? O.names[s][clk % ORD_NAMES] : "an earlier op";
	char site[256] = "";
	if (pc)
		pc_name(site, sizeof site, pc);
	fprintf(stderr,
		"kemu: stream-order race: %s (stream %d, op %llu) %s %zu bytes at offset %lu of a %lu-byte cudaMalloc "
		"block (%p) that %s (stream %d, op %llu) %s, with no event wait, stream order or host wait between "
		"them%s%s\n",
		O.name, O.stream, (unsigned long long)(O.me & 0xffffffffffffull), write ? "writes" : "reads", n,
		(unsigned long)(a - al.lo), (unsigned long)(al.hi - al.lo), (void *)a, who, s, (unsigned long long)clk,
		other_wrote ? "wrote" : "read", pc ? "; pc " : "", site);
}

OrdCell *order_shadow(Alloc &al)
{
	if (!al.ord) {
		size_t bytes = ((al.hi - al.lo) / 4 + 1) * sizeof(OrdCell);
		void *m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			       0);
		if (m == MAP_FAILED)
			return nullptr; // unchecked rather than failed
		al.ord = (OrdCell *)m;
		al.ord_bytes = bytes;
	}
	return al.ord;
}

void order_access(uintptr_t a, size_t n, bool write, const void *pc)
{
	int k = alloc_of(a);
	if (k < 0)
		return;
	Alloc &al = C.allocs[k];
	OrdCell *sh = order_shadow(al);
	if (!sh || !n)
		return;
	if (n > al.hi - a)
		n = al.hi - a;
	for (size_t g = (a - al.lo) / 4, end = (a + n - 1 - al.lo) / 4; g <= end; g++) {
		OrdCell &c = sh[g];
		if (!ordered(c.w))
			order_report(al, a, n, write, c.w, true, pc);
		if (write && !ordered(c.r))
			order_report(al, a, n, write, c.r, false, pc);
		(write ? c.w : c.r) = O.me;
	}
}

inline void access(uintptr_t a, size_t n, bool write, const void *pc)
{
	if (a - C.st_lo < C.st_len) {
		if (on & (KEMU_CHECK_RACE | KEMU_CHECK_INIT))
			shared_access(C.st_sh + (a - C.st_lo), a,
				      n < C.st_lo + C.st_len - a ? n : C.st_lo + C.st_len - a, write, pc);
	} else if (a - C.dyn_lo < C.dyn_len) {
		if (on & (KEMU_CHECK_RACE | KEMU_CHECK_INIT))
			shared_access(C.dyn_sh + (a - C.dyn_lo), a,
				      n < C.dyn_lo + C.dyn_len - a ? n : C.dyn_lo + C.dyn_len - a, write, pc);
	} else {
		if (write && C.global_ok)
			global_write(a, n, pc);
		if (on & ORDER_BIT)
			order_access(a, n, write, pc);
	}
}

void reset_shared_shadow()
{
	if (C.st_sh)
		memset((void *)C.st_sh, 0, C.st_len * sizeof(ShByte));
	if (C.dyn_sh)
		memset((void *)C.dyn_sh, 0, C.dyn_sh_cap * sizeof(ShByte));
	C.epoch = 1;
}

void bump_epoch()
{
	if (++C.epoch == 0xfffffff0u)
		reset_shared_shadow(); // every record refers to an epoch before this one
}

} // namespace

unsigned kemu_checks(unsigned which)
{
	configure();
	unsigned prev = C.which;
	C.which = which & KEMU_CHECK_ALL & AVAILABLE;
	return prev;
}

void kemu_check_alloc(void *p, size_t bytes)
{
	pthread_mutex_lock(&alloc_lock);
	configure();
	if (C.nalloc == C.capalloc) {
		int cap = C.capalloc ? 2 * C.capalloc : 64;
		Alloc *na = (Alloc *)realloc(C.allocs, (size_t)cap * sizeof(Alloc));
		if (!na) { // not checked then
			pthread_mutex_unlock(&alloc_lock);
			return;
		}
		C.allocs = na;
		C.capalloc = cap;
	}
	int k = find_alloc((uintptr_t)p);
	if (k < 0) {
		k = 0;
		while (k < C.nalloc && C.allocs[k].lo < (uintptr_t)p)
			k++;
	}
	memmove(&C.allocs[k + 1], &C.allocs[k], (size_t)(C.nalloc - k) * sizeof(Alloc));
	C.allocs[k] = Alloc{(uintptr_t)p, (uintptr_t)p + bytes, nullptr, 0, nullptr, 0};
	C.nalloc++;
	C.table_gen++;
	pthread_mutex_unlock(&alloc_lock);
}

void kemu_check_free(void *p)
{
	pthread_mutex_lock(&alloc_lock);
	int k = find_alloc((uintptr_t)p);
	if (k >= 0 && C.allocs[k].lo == (uintptr_t)p) {
		if (C.allocs[k].shadow)
			munmap(C.allocs[k].shadow, C.allocs[k].shadow_bytes);
		if (C.allocs[k].ord)
			munmap(C.allocs[k].ord, C.allocs[k].ord_bytes);
		memmove(&C.allocs[k], &C.allocs[k + 1], (size_t)(C.nalloc - k - 1) * sizeof(Alloc));
		C.nalloc--;
	}
	C.table_gen++;
	pthread_mutex_unlock(&alloc_lock);
}

int kemu_check_launch_begin(const char *kernel, dim3 grid, dim3 block, void *dyn, size_t dyn_len)
{
	configure();
	pthread_mutex_lock(&alloc_lock);
	C.kernel = kernel;
	C.block = block;
	uintptr_t st_len = __start_kemu_shared ? (uintptr_t)(__stop_kemu_shared - __start_kemu_shared) : 0;
	if (st_len && !C.st_sh) {
		C.st_sh = (ShByte *)calloc(st_len, sizeof(ShByte));
		if (!C.st_sh) {
			pthread_mutex_unlock(&alloc_lock);
			return -ENOMEM;
		}
		C.st_lo = (uintptr_t)__start_kemu_shared;
		C.st_len = st_len;
	}
	if (dyn_len > C.dyn_sh_cap) {
		free(C.dyn_sh);
		C.dyn_sh = (ShByte *)calloc(dyn_len, sizeof(ShByte));
		C.dyn_sh_cap = C.dyn_sh ? dyn_len : 0;
		if (!C.dyn_sh) {
			pthread_mutex_unlock(&alloc_lock);
			return -ENOMEM;
		}
	}
	C.dyn_lo = (uintptr_t)dyn;
	C.dyn_len = dyn ? dyn_len : 0;
	uint64_t n = (uint64_t)grid.x * grid.y * grid.z;
	C.global_ok = (C.which & KEMU_CHECK_GLOBAL) && n < 0x80000000ull;
	if (C.global_ok && (uint64_t)C.next_base + n >= 0xffffffffull) { // serials wrap: forget every write
		for (int k = 0; k < C.nalloc; k++)
			if (C.allocs[k].shadow)
				madvise(C.allocs[k].shadow, C.allocs[k].shadow_bytes, MADV_DONTNEED);
		C.next_base = 1;
	}
	C.launch_base = C.next_base;
	if (C.global_ok)
		C.next_base += (uint32_t)n;
	return 0;
}

void kemu_check_block_begin(uint64_t linear_block)
{
	bump_epoch();
	C.block_base = C.epoch;
	C.serial = C.launch_base + (uint32_t)linear_block;
	on = C.which | order_on;
}

void kemu_check_stacks(const void *lo, size_t len)
{
	C.stk_lo = (uintptr_t)lo;
	C.stk_len = len;
}

void kemu_check_block_end(void)
{
	on = order_on;
}

void kemu_check_launch_end(void)
{
	on = order_on;
	pthread_mutex_unlock(&alloc_lock);
}

// ---- the stream-order checker's entry points (kemu_sched.cpp runs one op at a time) ----
void kemu_check_order_begin(int stream, const KemuVClock *vc, const char *op)
{
	uint64_t clk = vc->c[stream];
	O.stream = stream;
	O.vc = vc;
	O.me = (uint64_t)(stream + 1) << 48 | clk;
	O.name = op;
	O.failed = false;
	O.names[stream][clk % ORD_NAMES] = op;
	O.name_clk[stream][clk % ORD_NAMES] = clk;
	order_on = AVAILABLE ? ORDER_BIT : 0; // without the instrumentation kernels are not seen: no checks
	on = order_on;
}

void kemu_check_order_range(const void *p, size_t n, bool write)
{
	if (!order_on)
		return;
	pthread_mutex_lock(&alloc_lock);
	order_access((uintptr_t)p, n, write, nullptr);
	pthread_mutex_unlock(&alloc_lock);
}

extern "C" void kemu_check_order_range_c(const void *p, size_t n, int write)
{
	kemu_check_order_range(p, n, write != 0);
}

bool kemu_check_order_end(void)
{
	order_on = 0;
	on = 0;
	return O.failed;
}

bool kemu_check_is_device(const void *p)
{
	pthread_mutex_lock(&alloc_lock);
	bool dev = find_alloc((uintptr_t)p) >= 0;
	pthread_mutex_unlock(&alloc_lock);
	return dev;
}

void kemu_check_barrier(void)
{
	bump_epoch();
}

void kemu_check_syncwarp(unsigned warp)
{
	C.gen[warp & 31]++;
}

void kemu_check_ldmatrix(const void *row, size_t n)
{
	if (on)
		access((uintptr_t)row, n, false, __builtin_return_address(0));
}

void kemu::atomic_access(const void *p, size_t n)
{
	// an atomic conflicts with nothing, but reads its operand: initcheck only
	uintptr_t a = (uintptr_t)p;
	if (!(on & KEMU_CHECK_INIT))
		return;
	ShByte *sh = a - C.st_lo < C.st_len     ? C.st_sh + (a - C.st_lo)
		     : a - C.dyn_lo < C.dyn_len ? C.dyn_sh + (a - C.dyn_lo)
						: nullptr;
	if (!sh)
		return;
	for (size_t i = 0; i < n; i++)
		if (sh[i].w.epoch < C.block_base)
			shared_fault("atomic on uninitialized shared memory", a, n, false, nullptr, false,
				     __builtin_return_address(0));
}

// ---- the instrumentation's entry points (ThreadSanitizer's names, not its runtime) ----
// Only where no sanitizer runtime is linked: under SAN=address or thread, the kernels are not
// instrumented (module.mk) and these names belong to the sanitizer.
#if KEMU_CHECK_RUNTIME
#define KEMU_TSAN_RW(n)                                                                                                \
	extern "C" void __tsan_read##n(void *p)                                                                        \
	{                                                                                                              \
		if (__builtin_expect(on != 0, 0))                                                                      \
			access((uintptr_t)p, n, false, __builtin_return_address(0));                                   \
	}                                                                                                              \
	extern "C" void __tsan_write##n(void *p)                                                                       \
	{                                                                                                              \
		if (__builtin_expect(on != 0, 0))                                                                      \
			access((uintptr_t)p, n, true, __builtin_return_address(0));                                    \
	}                                                                                                              \
	extern "C" void __tsan_unaligned_read##n(void *p)                                                              \
	{                                                                                                              \
		if (__builtin_expect(on != 0, 0))                                                                      \
			access((uintptr_t)p, n, false, __builtin_return_address(0));                                   \
	}                                                                                                              \
	extern "C" void __tsan_unaligned_write##n(void *p)                                                             \
	{                                                                                                              \
		if (__builtin_expect(on != 0, 0))                                                                      \
			access((uintptr_t)p, n, true, __builtin_return_address(0));                                    \
	}
KEMU_TSAN_RW(1)
KEMU_TSAN_RW(2)
KEMU_TSAN_RW(4)
KEMU_TSAN_RW(8)
KEMU_TSAN_RW(16)
#undef KEMU_TSAN_RW
extern "C" void __tsan_read_range(void *p, unsigned long n)
{
	if (__builtin_expect(on != 0, 0))
		access((uintptr_t)p, n, false, __builtin_return_address(0));
}
extern "C" void __tsan_write_range(void *p, unsigned long n)
{
	if (__builtin_expect(on != 0, 0))
		access((uintptr_t)p, n, true, __builtin_return_address(0));
}
// atomics of host code in the same files (a function-local static's guard, ...): done as asked,
// sequentially consistent whatever order was asked (never weaker)
#define KEMU_TSAN_ATOMIC(n, T)                                                                                         \
	extern "C" T __tsan_atomic##n##_load(const volatile T *a, int)                                                 \
	{                                                                                                              \
		return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                           \
	}                                                                                                              \
	extern "C" void __tsan_atomic##n##_store(volatile T *a, T v, int)                                              \
	{                                                                                                              \
		__atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                              \
	}                                                                                                              \
	extern "C" T __tsan_atomic##n##_exchange(volatile T *a, T v, int)                                              \
	{                                                                                                              \
		return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                    \
	}                                                                                                              \
	extern "C" T __tsan_atomic##n##_fetch_add(volatile T *a, T v, int)                                             \
	{                                                                                                              \
		return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                                     \
	}                                                                                                              \
	extern "C" T __tsan_atomic##n##_fetch_sub(volatile T *a, T v, int)                                             \
	{                                                                                                              \
		return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                                     \
	}                                                                                                              \
	extern "C" T __tsan_atomic##n##_fetch_and(volatile T *a, T v, int)                                             \
	{                                                                                                              \
		return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                                     \
	}                                                                                                              \
	extern "C" T __tsan_atomic##n##_fetch_or(volatile T *a, T v, int)                                              \
	{                                                                                                              \
		return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                                      \
	}                                                                                                              \
	extern "C" T __tsan_atomic##n##_fetch_xor(volatile T *a, T v, int)                                             \
	{                                                                                                              \
		return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                                     \
	}                                                                                                              \
	extern "C" T __tsan_atomic##n##_fetch_nand(volatile T *a, T v, int)                                            \
	{                                                                                                              \
		return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                                    \
	}                                                                                                              \
	extern "C" int __tsan_atomic##n##_compare_exchange_strong(volatile T *a, T *c, T v, int, int)                  \
	{                                                                                                              \
		return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                \
	}                                                                                                              \
	extern "C" int __tsan_atomic##n##_compare_exchange_weak(volatile T *a, T *c, T v, int, int)                    \
	{                                                                                                              \
		return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                \
	}                                                                                                              \
	extern "C" T __tsan_atomic##n##_compare_exchange_val(volatile T *a, T c, T v, int, int)                        \
	{                                                                                                              \
		__atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                      \
		return c;                                                                                              \
	}
KEMU_TSAN_ATOMIC(8, uint8_t)
KEMU_TSAN_ATOMIC(16, uint16_t)
KEMU_TSAN_ATOMIC(32, uint32_t)
KEMU_TSAN_ATOMIC(64, uint64_t)
#undef KEMU_TSAN_ATOMIC
extern "C" void __tsan_atomic_thread_fence(int)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
extern "C" void __tsan_atomic_signal_fence(int)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}
extern "C" void __tsan_init(void) {}
extern "C" void __tsan_func_entry(void *) {}
extern "C" void __tsan_func_exit(void) {}
extern "C" void __tsan_vptr_update(void **, void *) {}
extern "C" void __tsan_vptr_read(void **) {}
#endif
