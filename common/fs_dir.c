// mkdir -p for the programs' output folders, and the creation of their temporary files.
#include "fs_dir.h" // defines: fs_mkdir_p, fs_create_new, fs_fopen_new, fs_dir_own

#include <errno.h>    // defines: errno, EEXIST, ENOTDIR, ENOMEM, EINVAL
#include <fcntl.h>    // defines: open, O_*
#include <unistd.h>   // defines: unlink, close, geteuid
#include <stdlib.h>   // defines: free
#include <stdio.h>    // defines: snprintf
#include <string.h>   // defines: strdup, strerror
#include <sys/stat.h> // defines: mkdir, stat, S_ISDIR

static int make_one(const char *p, mode_t mode)
{
	if (mkdir(p, mode) == 0)
		return 0;
	int e = errno;
	struct stat st;
	if (e == EEXIST || e == EACCES || e == EROFS) { // EACCES / EROFS: an existing folder above us
		if (stat(p, &st) == 0)
			return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	}
	return -e;
}

int fs_mkdir_p(const char *path, mode_t mode)
{
	if (!path || !*path)
		return -EINVAL;
	char *buf = strdup(path);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	for (char *p = buf + 1; *p && !rc; p++)
		if (*p == '/' && p[-1] != '/') {
			*p = 0;
			rc = make_one(buf, mode);
			*p = '/';
		}
	if (!rc)
		rc = make_one(buf, mode);
	free(buf);
	return rc;
}

int fs_create_new(const char *path, mode_t mode)
{
	if (unlink(path) < 0 && errno != ENOENT && errno != EPERM && errno != EACCES)
		return -errno;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	return fd < 0 ? -errno : fd;
}

FILE *fs_fopen_new(const char *path, mode_t mode)
{
	int fd = fs_create_new(path, mode);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(path);
		errno = e;
	}
	return f;
}

int fs_dir_own(const char *path, const char *what, char *why, size_t whylen)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		int e = errno;
		snprintf(why, whylen, "%s %s: %s", what, path, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "%s %s is not a directory", what, path);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid()) {
		snprintf(
			why, whylen,
			"%s %s belongs to uid %u, not to this user (uid %u): its owner could replace the files written "
			"there; use a folder of your own",
			what, path, (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & S_IWOTH) {
		snprintf(why, whylen,
			 "%s %s is writable by every user (mode %04o): another user could plant links at the names "
			 "written there; chmod o-w it, or use a folder of your own",
			 what, path, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int fs_open_regular(const char *path, struct stat *st)
{
	struct stat own;
	st = st ? st : &own;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	int bad = fstat(fd, st) < 0 ? errno : S_ISDIR(st->st_mode) ? EISDIR : !S_ISREG(st->st_mode) ? EINVAL : 0;
	if (bad) {
		close(fd);
		return -bad;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

FILE *fs_fopen_read(const char *path, const char *mode)
{
	int fd = fs_open_regular(path, NULL);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	FILE *f = fdopen(fd, mode);
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

const char *fs_strerror(int e)
{
	return e == EINVAL ? "not a regular file (a FIFO, socket or device)" : strerror(e);
}
