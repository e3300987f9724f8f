// MemAvailable from /proc/meminfo, with the free pages as the fallback: with a warm page cache
// MemFree is a fraction of what the kernel would hand out (2.4 GiB free, 22.5 GiB available).
#include "proc_mem.h" // defines: proc_meminfo_field, proc_mem_available

#include <errno.h>  // defines: ENOENT, EBADMSG, ENOTSUP
#include <fcntl.h>  // defines: open, O_RDONLY
#include <string.h> // defines: strlen, memcmp
#include <unistd.h> // defines: read, close, sysconf

int proc_meminfo_field(const char *text, size_t len, const char *key, uint64_t *bytes)
{
	const size_t kl = strlen(key);
	for (size_t p = 0; p < len;) {
		size_t e = p;
		while (e < len && text[e] != '\n')
			e++;
		if (e - p > kl && !memcmp(text + p, key, kl) && text[p + kl] == ':') {
			size_t i = p + kl + 1;
			while (i < e && (text[i] == ' ' || text[i] == '\t'))
				i++;
			uint64_t v = 0;
			size_t d = i;
			while (i < e && text[i] >= '0' && text[i] <= '9' && v < (UINT64_MAX - 9) / 10)
				v = v * 10 + (uint64_t)(text[i++] - '0');
			while (i < e && text[i] == ' ')
				i++;
			if (i == d || e - i != 2 || memcmp(text + i, "kB", 2) || v > UINT64_MAX / 1024)
				return -EBADMSG;
			*bytes = v * 1024;
			return 0;
		}
		p = e + 1;
	}
	return -ENOENT;
}

int proc_mem_available(uint64_t *bytes, int *from_meminfo)
{
	char buf[8192];
	ssize_t n = -1;
	int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof buf);
		close(fd);
	}
	if (from_meminfo)
		*from_meminfo = 0;
	if (n > 0 && proc_meminfo_field(buf, (size_t)n, "MemAvailable", bytes) == 0) {
		if (from_meminfo)
			*from_meminfo = 1;
		return 0;
	}
	long page = sysconf(_SC_PAGESIZE), avail = sysconf(_SC_AVPHYS_PAGES);
	if (page <= 0 || avail < 0)
		return -ENOTSUP;
	*bytes = (uint64_t)avail * (uint64_t)page;
	return 0;
}
