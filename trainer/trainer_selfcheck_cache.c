// The self-check's cache of passes (trainer_selfcheck.h): one small file per device and build key
// under $XDG_CACHE_HOME/avclip/, written through a temporary and a rename, read strictly.
#include "trainer_selfcheck.h" // defines: selfcheck_cache_path, selfcheck_cache_hit, selfcheck_cache_store

#include "fs_dir.h"   // defines: fs_create_new, fs_mkdir_p
#include "hash_fnv.h" // defines: fnv1a64_more, FNV1A64_BASIS_VOCAB

#include <errno.h>    // defines: ENOENT, ENAMETOOLONG, EINVAL, EIO
#include <fcntl.h>    // defines: open, O_RDONLY, O_NOFOLLOW, O_CLOEXEC, O_NONBLOCK
#include <stdint.h>   // defines: uint64_t
#include <stdio.h>    // defines: snprintf, rename
#include <stdlib.h>   // defines: getenv
#include <string.h>   // defines: memcmp, strchr, strrchr
#include <sys/stat.h> // defines: fstat, S_ISREG
#include <unistd.h>   // defines: read, write, fsync, close, unlink, getpid, geteuid

// FNV-1a: the file name of a key (the key itself is inside, compared in full)
// (the tokenizer's basis, so the cache's file names stay those of earlier runs)
static uint64_t fnv1a(const char *k)
{
	return fnv1a64_more(FNV1A64_BASIS_VOCAB, k, strlen(k));
}

#define CACHE_MAGIC "avclip-selfcheck 1\n"

int selfcheck_cache_path(const char *key, char *path, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;
	if (xdg && xdg[0] == '/')
		n = snprintf(path, len, "%s/avclip/selfcheck-%016llx", xdg, (unsigned long long)fnv1a(key));
	else if (home && home[0] == '/')
		n = snprintf(path, len, "%s/.cache/avclip/selfcheck-%016llx", home, (unsigned long long)fnv1a(key));
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

// the file's whole content for key
static int cache_text(const char *key, char *buf, size_t len)
{
	int n = snprintf(buf, len, CACHE_MAGIC "key %s\nresult pass\n", key);
	return n < 0 || (size_t)n >= len || strchr(key, '\n') ? -EINVAL : n;
}

int selfcheck_cache_hit(const char *path, const char *key)
{
	char want[1024], got[1025];
	int n = cache_text(key, want, sizeof want);
	if (n < 0)
		return 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	ssize_t got_n =
		fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() ? read(fd, got, sizeof got) : -1;
	close(fd);
	return got_n == n && memcmp(got, want, (size_t)n) == 0;
}

int selfcheck_cache_store(const char *path, const char *key)
{
	char text[1024], dir[4096], tmp[4200];
	int n = cache_text(key, text, sizeof text);
	if (n < 0)
		return n;
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -EINVAL;
	*slash = 0;
	int rc = fs_mkdir_p(dir, 0700);
	if (rc < 0)
		return rc;
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	int fd = fs_create_new(tmp, 0600);
	if (fd < 0)
		return fd;
	rc = write(fd, text, (size_t)n) == n && fsync(fd) == 0 ? 0 : -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc ? (rc < 0 ? rc : -EIO) : 0;
}
