// mkdir -p for the programs' output folders.
#include "fs_dir.h" // defines: fs_mkdir_p

#include <errno.h>    // defines: errno, EEXIST, ENOTDIR, ENOMEM, EINVAL
#include <stdlib.h>   // defines: free
#include <string.h>   // defines: strdup
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
