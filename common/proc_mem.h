// The machine's memory as the kernel counts what a program can still get: MemAvailable of
// /proc/meminfo (free pages plus the page cache and slabs it gives back), not MemFree.
#ifndef COMMON_PROC_MEM_H
#define COMMON_PROC_MEM_H
// defines: proc_meminfo_field, proc_mem_available

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t

// The value of the line "KEY: N kB" of meminfo text text[0..len) in bytes. 0, -ENOENT when no
// line has that key, -EBADMSG when its value is not a number of kB.
int proc_meminfo_field(const char *text, size_t len, const char *key, uint64_t *bytes);
// MemAvailable from /proc/meminfo; where there is none (no /proc, kernels before 3.14) the free
// pages (sysconf _SC_AVPHYS_PAGES), which leave out the page cache. *from_meminfo (when not NULL):
// 1 when the figure is MemAvailable. 0 or -ENOTSUP when neither is known.
int proc_mem_available(uint64_t *bytes, int *from_meminfo);

#endif
