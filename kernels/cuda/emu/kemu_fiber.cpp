// The shim's fibers: a block's threads as cooperative fibers on one OS thread, switched by a
// hand-written x86-64 context switch (ucontext elsewhere, or with -DKEMU_UCONTEXT).
//
// Design note. A fiber runs until it reaches a barrier (__syncthreads, a warp collective) or
// returns; then it picks the next runnable fiber itself and switches straight to it, so a
// barrier costs one switch per thread. Runnable fibers sit in an array; in shuffled mode the next
// one is drawn at random (seeded), so the order of threads between two barriers changes from
// block to block and run to run. Guarantees: a barrier releases only when every thread of the
// block (or lane of the warp) has arrived at the same site; a thread that exits while others wait,
// or threads that wait at different barriers, end the block with a fault the launch returns.
// Not modelled: preemption inside a segment (a thread spinning on another never yields).
#include "kemu_impl.h" // defines: kemu_fibers_run_block

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__) || defined(KEMU_UCONTEXT)
#define KEMU_USE_UCONTEXT 1
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace kemu
{
ThreadState *cur;
}

enum { F_READY, F_BAR, F_WARP, F_DONE };

struct KemuFiber : kemu::ThreadState {
#ifdef KEMU_USE_UCONTEXT
	ucontext_t uc;
#else
	void *sp;
#endif
	int state;
	char *stack_lo; // lowest usable byte of its stack
};

struct Warp {
	int arrived, nlanes, kind;
	unsigned mask, first_lane; // of the first lane at the collective
	unsigned gen;
	const char *file;
	int line;
	kemu::Combine combine;
	void *ctx;
	kemu::Slot slots[2][32]; // double-buffered by gen: a lane reads round g while others fill g+1
};

static struct {
	KemuFiber *f;
	int nf, cap;
	Warp *warps;
	int *rq, nrq;
	int bar_arrived, done;
	const char *bar_file;
	int bar_line;
	char *stacks;
	size_t stack_bytes, map_bytes;
	kemu::Body body;
	void *ctx;
	int shuffle, faulted;
	uint64_t rng;
	char fault_msg[768];
	uint64_t switches;
#ifdef KEMU_USE_UCONTEXT
	ucontext_t main_uc;
#else
	void *main_sp;
#endif
#if defined(__SANITIZE_ADDRESS__)
	void *main_lo;
	size_t main_size;
#endif
} S;

#ifndef KEMU_USE_UCONTEXT
// kemu_switch(save, to): saves the callee-saved registers on the current stack, stores the stack
// pointer in *save and resumes the stack `to` (System V x86-64; MXCSR and the x87 control word are
// not switched: kernels do not change rounding modes).
extern "C" void kemu_switch(void **save, void *to);
__asm__(".text\n"
	".p2align 4\n"
	".type kemu_switch,@function\n"
	"kemu_switch:\n"
	"\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
	"\tret\n"
	".size kemu_switch, .-kemu_switch\n");
#endif

static void fiber_main();

// Switches from fiber `from` (NULL: the launching thread) to fiber `to` (NULL: back to it).
static void switch_to(KemuFiber *from, KemuFiber *to)
{
	S.switches++;
	kemu::cur = to;
#if defined(__SANITIZE_ADDRESS__)
	// tell ASan which stack runs next; a fiber that has finished or faulted is never resumed, so
	// its fake stack is dropped (NULL save slot)
	void *fake = nullptr;
	bool resumes = !from || (from->state != F_DONE && !S.faulted);
	__sanitizer_start_switch_fiber(resumes ? &fake : nullptr, to ? to->stack_lo : S.main_lo,
				       to ? S.stack_bytes : S.main_size);
#endif
#ifdef KEMU_USE_UCONTEXT
	swapcontext(from ? &from->uc : &S.main_uc, to ? &to->uc : &S.main_uc);
#else
	kemu_switch(from ? &from->sp : &S.main_sp, to ? to->sp : S.main_sp);
#endif
#if defined(__SANITIZE_ADDRESS__)
	__sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

static uint64_t next_rand()
{
	uint64_t z = (S.rng += 0x9e3779b97f4a7c15ull); // splitmix64
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void push_ready(KemuFiber *f)
{
	f->state = F_READY;
	S.rq[S.nrq++] = (int)(f - S.f);
}

static void fault_v(const char *fmt, va_list ap)
{
	if (S.faulted)
		return;
	S.faulted = 1;
	int n = snprintf(S.fault_msg, sizeof S.fault_msg, "block (%u,%u,%u): ", kemu::block_idx.x, kemu::block_idx.y,
			 kemu::block_idx.z);
	vsnprintf(S.fault_msg + n, sizeof S.fault_msg - (size_t)n, fmt, ap);
}

static void fault_here(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fault_here(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fault_v(fmt, ap);
	va_end(ap);
}

// Nothing runnable and not all done: say who waits where.
static void fault_deadlock()
{
	int nwarp = 0, done = S.done;
	const Warp *w0 = nullptr;
	for (int w = 0; w < (S.nf + 31) / 32; w++)
		if (S.warps[w].arrived) {
			nwarp += S.warps[w].arrived;
			if (!w0)
				w0 = &S.warps[w];
		}
	if (S.bar_arrived && !nwarp && done)
		fault_here("%d of %d threads wait at __syncthreads (%s:%d) while %d have exited: every thread of a "
			   "block must reach each barrier",
			   S.bar_arrived, S.nf, S.bar_file, S.bar_line, done);
	else if (w0 && !S.bar_arrived && !done)
		fault_here("only %d of %d lanes of a warp reached the collective at %s:%d", w0->arrived, w0->nlanes,
			   w0->file, w0->line);
	else
		fault_here("deadlock: %d threads at __syncthreads%s%s%s, %d lanes in warp collectives%s%s%s, %d exited "
			   "(of %d): a barrier or collective is not reached by all threads",
			   S.bar_arrived, S.bar_arrived ? " (" : "", S.bar_arrived ? S.bar_file : "",
			   S.bar_arrived ? ")" : "", nwarp, w0 ? " (first at " : "", w0 ? w0->file : "", w0 ? ")" : "",
			   done, S.nf);
}

// Picks the next runnable fiber and switches to it; returns when `self` runs again. `self` is
// NULL for the launching thread, which returns once the block has finished or faulted.
static void schedule(KemuFiber *self)
{
	KemuFiber *next = nullptr;
	if (!S.faulted && S.nrq > 0) {
		int i = S.shuffle ? (int)(next_rand() % (uint64_t)S.nrq) : S.nrq - 1;
		next = &S.f[S.rq[i]];
		S.rq[i] = S.rq[--S.nrq];
	} else if (!S.faulted && S.done < S.nf) {
		fault_deadlock();
	}
	if (next == self)
		return;
	switch_to(self, next); // next == NULL: back to the launching thread (done or faulted)
}

static void fiber_main()
{
	KemuFiber *self = static_cast<KemuFiber *>(kemu::cur);
#if defined(__SANITIZE_ADDRESS__)
	__sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
	S.body(S.ctx);
	self->state = F_DONE;
	S.done++;
	schedule(self);
	abort(); // a finished fiber is never resumed
}

#ifdef KEMU_USE_UCONTEXT
static void uc_entry()
{
	fiber_main();
}
#endif

static int reserve(int nthreads)
{
	if (nthreads <= S.cap)
		return 0;
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
#if defined(__SANITIZE_ADDRESS__)
	S.stack_bytes = 512 * 1024; // redzones and fake stacks need room
#else
	S.stack_bytes = 128 * 1024;
#endif
	if (S.stacks)
		munmap(S.stacks, S.map_bytes);
	free(S.f);
	free(S.warps);
	free(S.rq);
	S.cap = 0;
	size_t per = S.stack_bytes + page; // a guard page below every stack
	S.map_bytes = per * (size_t)nthreads;
	void *m =
		mmap(nullptr, S.map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	S.f = (KemuFiber *)calloc((size_t)nthreads, sizeof(KemuFiber));
	S.warps = (Warp *)calloc((size_t)(nthreads + 31) / 32, sizeof(Warp));
	S.rq = (int *)calloc((size_t)nthreads, sizeof(int));
	if (m == MAP_FAILED || !S.f || !S.warps || !S.rq) {
		S.stacks = m == MAP_FAILED ? nullptr : (char *)m;
		return -ENOMEM;
	}
	S.stacks = (char *)m;
	for (int i = 0; i < nthreads; i++) {
		char *lo = S.stacks + (size_t)i * per;
		if (mprotect(lo, page, PROT_NONE) != 0)
			return -errno;
		S.f[i].stack_lo = lo + page;
	}
	S.cap = nthreads;
	return 0;
}

static void init_fiber(KemuFiber *f)
{
#if defined(__SANITIZE_ADDRESS__)
	// a stack is reused block after block; the frames a finished fiber left poisoned are gone
	ASAN_UNPOISON_MEMORY_REGION(f->stack_lo, S.stack_bytes);
#endif
#ifdef KEMU_USE_UCONTEXT
	getcontext(&f->uc);
	f->uc.uc_stack.ss_sp = f->stack_lo;
	f->uc.uc_stack.ss_size = S.stack_bytes;
	f->uc.uc_link = nullptr;
	makecontext(&f->uc, uc_entry, 0);
#else
	// a frame kemu_switch can "return" into: six callee-saved registers, then fiber_main's
	// address, then a fake return address so fiber_main starts with the ABI's stack alignment
	void **sp = (void **)(f->stack_lo + S.stack_bytes);
	*--sp = nullptr;
	*--sp = (void *)fiber_main;
	for (int i = 0; i < 6; i++)
		*--sp = nullptr;
	f->sp = sp;
#endif
}

int kemu_fibers_run_block(const dim3 &block, kemu::Body body, void *ctx, int shuffle, uint64_t *rng, char *msg,
			  size_t msg_len)
{
	int n = (int)(block.x * block.y * block.z);
	int rc = reserve(n);
	if (rc)
		return rc;
	kemu_check_stacks(S.stacks, S.map_bytes);
#if defined(__SANITIZE_ADDRESS__)
	pthread_attr_t attr;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		pthread_attr_getstack(&attr, &S.main_lo, &S.main_size);
		pthread_attr_destroy(&attr);
	}
#endif
	S.nf = n;
	S.body = body;
	S.ctx = ctx;
	S.shuffle = shuffle;
	S.rng = *rng;
	S.faulted = 0;
	S.fault_msg[0] = 0;
	S.nrq = S.bar_arrived = S.done = 0;
	for (int w = 0; w < (n + 31) / 32; w++) {
		Warp *wp = &S.warps[w];
		wp->arrived = 0;
		wp->gen = 0;
		wp->nlanes = n - w * 32 < 32 ? n - w * 32 : 32;
	}
	for (int i = n - 1; i >= 0; i--) { // pushed backwards: in order mode thread 0 runs first
		KemuFiber *f = &S.f[i];
		f->linear = (unsigned)i;
		f->tid = make_uint3(i % block.x, (i / block.x) % block.y, i / (block.x * block.y));
		f->lane = (unsigned)i % 32;
		f->warp = (unsigned)i / 32;
		init_fiber(f);
		push_ready(f);
	}
	schedule(nullptr);
	kemu::cur = nullptr;
	*rng = S.rng;
	if (S.faulted) {
		snprintf(msg, msg_len, "%s", S.fault_msg);
		return -EFAULT;
	}
	return 0;
}

uint64_t kemu_switch_count(void)
{
	return S.switches;
}

const char *kemu_switch_name(void)
{
#ifdef KEMU_USE_UCONTEXT
	return "ucontext (swapcontext)";
#else
	return "hand-written x86-64";
#endif
}

// ---- barriers (called from fibers) ----
void kemu::syncthreads(const char *file, int line)
{
	KemuFiber *self = static_cast<KemuFiber *>(cur);
	__asm__ __volatile__("" ::: "memory");
	if (S.bar_arrived == 0) {
		S.bar_file = file;
		S.bar_line = line;
	} else if (S.bar_line != line || strcmp(S.bar_file, file) != 0) {
		fault("threads of a block wait at different __syncthreads: %s:%d and %s:%d", S.bar_file, S.bar_line,
		      file, line);
	}
	self->state = F_BAR;
	if (++S.bar_arrived == S.nf) {
		S.bar_arrived = 0;
		kemu_check_barrier();
		for (int i = S.nf - 1; i >= 0; i--)
			push_ready(&S.f[i]);
	}
	schedule(self);
	__asm__ __volatile__("" ::: "memory");
}

const kemu::Slot *kemu::warp_sync(int kind, unsigned mask, const void *mine, size_t bytes, Combine combine, void *ctx,
				  const char *file, int line)
{
	KemuFiber *self = static_cast<KemuFiber *>(cur);
	Warp *w = &S.warps[self->warp];
	__asm__ __volatile__("" ::: "memory");
	// CUDA's rules for the mask (synccheck), then the dialect's: every lane of the warp takes part
	if (!(mask >> self->lane & 1))
		fault("warp collective at %s:%d with mask 0x%08x, which excludes the calling lane %u (undefined on a "
		      "device)",
		      file, line, mask, self->lane);
	if (w->arrived && mask != w->mask)
		fault("lanes %u and %u of warp %u call the warp collective at %s:%d with different masks, 0x%08x and "
		      "0x%08x",
		      w->first_lane, self->lane, self->warp, file, line, w->mask, mask);
	if (mask != 0xffffffffu) {
		unsigned left_out = 0;
		for (int l = 0; l < w->nlanes; l++)
			if (!(mask >> l & 1) && S.f[self->warp * 32 + l].state != F_DONE)
				left_out++;
		fault("warp collective at %s:%d with mask 0x%08x, which leaves out %u running lanes of the warp: the "
		      "dialect uses the full mask",
		      file, line, mask, left_out);
	}
	if (w->nlanes != 32)
		fault("warp collective at %s:%d in a partial warp (%d lanes; block of %d threads): blocks that use "
		      "warp collectives must be a multiple of 32 threads",
		      file, line, w->nlanes, S.nf);
	if (w->arrived == 0) {
		w->mask = mask;
		w->first_lane = self->lane;
		w->kind = kind;
		w->file = file;
		w->line = line;
		w->combine = combine;
		w->ctx = ctx;
	} else if (w->kind != kind || (kind != K_SYNCWARP && (w->line != line || strcmp(w->file, file) != 0))) {
		fault("lanes of warp %u meet at different collectives: %s:%d and %s:%d", self->warp, w->file, w->line,
		      file, line);
	}
	Slot *slots = w->slots[w->gen & 1];
	if (bytes)
		memcpy(slots[self->lane].b, mine, bytes);
	self->state = F_WARP;
	if (++w->arrived == 32) {
		if (kind == K_SYNCWARP)
			kemu_check_syncwarp(self->warp); // __syncwarp orders the lanes' memory accesses
		if (w->combine)
			w->combine(slots, w->ctx);
		w->arrived = 0;
		w->gen++;
		for (int l = 31; l >= 0; l--)
			push_ready(&S.f[self->warp * 32 + l]);
	}
	schedule(self);
	__asm__ __volatile__("" ::: "memory");
	return slots;
}

void kemu::fault(const char *fmt, ...)
{
	KemuFiber *self = static_cast<KemuFiber *>(cur);
	va_list ap;
	va_start(ap, fmt);
	if (!S.faulted) {
		char head[96];
		snprintf(head, sizeof head, "block (%u,%u,%u) thread (%u,%u,%u): ", block_idx.x, block_idx.y,
			 block_idx.z, self->tid.x, self->tid.y, self->tid.z);
		char body[640];
		vsnprintf(body, sizeof body, fmt, ap);
		snprintf(S.fault_msg, sizeof S.fault_msg, "%s%s", head, body);
		S.faulted = 1;
	}
	va_end(ap);
	switch_to(self, nullptr);
	abort(); // a faulted block is never resumed
}
