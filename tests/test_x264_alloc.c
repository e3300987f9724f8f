// tools/x264_alloc.c's memalign (the one libx264 binds to in prep and synth): every block zeroed to
// its usable end, whatever the heap held there before, at the alignment asked (one that is not a
// power of two rounded up, as glibc's), and NULL for a size no allocator can give.
#include <malloc.h> // defines: malloc_usable_size, memalign
#include <stdint.h> // defines: uintptr_t, SIZE_MAX
#include <stdio.h>  // defines: printf
#include <stdlib.h> // defines: malloc, free
#include <string.h> // defines: memset

static int fails;

static void check(int ok, const char *what, size_t al, size_t n)
{
	if (!ok) {
		printf("FAIL: %s (alignment %zu, size %zu)\n", what, al, n);
		fails++;
	}
}

int main(void)
{
	static const size_t aligns[] = {1, 3, 8, 16, 64, 100, 4096};
	static const size_t sizes[] = {0, 1, 13, 4096, 23040, 172672, 1 << 20};
	for (size_t a = 0; a < sizeof aligns / sizeof *aligns; a++)
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
			size_t al = aligns[a], n = sizes[s];
			// dirty the heap where the block will likely come from: a freed block of the same size
			unsigned char *dirty = malloc(n + 64);
			memset(dirty, 0xa5, n + 64);
			free(dirty);
			unsigned char *p = memalign(al, n);
			check(p != NULL, "memalign returned NULL", al, n);
			if (!p)
				continue;
			size_t want = 1;
			while (want < al)
				want <<= 1;
			check((uintptr_t)p % want == 0, "block not at the alignment (rounded up to a power of two)", al,
			      n);
			size_t usable = malloc_usable_size(p), nonzero = 0;
			check(usable >= n, "usable size below the size asked", al, n);
			for (size_t i = 0; i < usable; i++)
				nonzero += p[i] != 0;
			check(nonzero == 0, "block not zeroed to its usable end", al, n);
			memset(p, 0x5a, usable); // the block is the caller's to its usable end
			free(p);
		}
	volatile size_t huge = SIZE_MAX - 4096; // read at run time: the compiler would refuse the constant
	check(memalign(64, huge) == NULL, "an impossible size did not return NULL", 64, huge);
	if (fails)
		return 1;
	printf("ok: memalign zeroes every block to its usable end at %zu alignments x %zu sizes\n",
	       sizeof aligns / sizeof *aligns, sizeof sizes / sizeof *sizes);
	return 0;
}
