// memalign for programs that encode with libx264 (prep, synth): every block zeroed to its usable
// end, so libx264's reads past the end of its own buffers see zeros, not what the heap held there.
//
// libx264 0.164 reads up to 16 bytes at the last few bytes of some frame buffers (valgrind: "Invalid
// read of size 16", 4 bytes past a 172,672-byte block from x264_malloc, with B-frames), and those
// bytes change its decisions. They are the heap's, whatever a thread or an earlier chunk left there,
// so a chunk could come out two bytes longer in one run of the same source and flags than in another
// (make demo-mae's data, one chunk of 1199, twice). prep's M_MMAP_THRESHOLD only covered blocks that
// glibc maps on their own, not one it carves from the top of a heap with room left. x264_malloc
// allocates with memalign; this definition, exported from the executable
// (-Wl,--export-dynamic-symbol=memalign), is the one libx264 binds to. Nothing else calls memalign
// here (libavutil uses posix_memalign), and the zeroing costs one memset per buffer an encoder opens.
#include <malloc.h> // defines: malloc_usable_size
#include <stdlib.h> // defines: posix_memalign
#include <string.h> // defines: memset

void *memalign(size_t alignment, size_t size);

void *memalign(size_t alignment, size_t size)
{
	// glibc's memalign rounds an alignment that is not a power of two up to one; posix_memalign
	// wants a power of two and a multiple of sizeof(void *)
	size_t al = sizeof(void *);
	while (al < alignment)
		al <<= 1;
	void *p = NULL;
	if (posix_memalign(&p, al, size ? size : 1))
		return NULL;
	memset(p, 0, malloc_usable_size(p));
	return p;
}
