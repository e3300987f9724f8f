// fs_mkdir_p: makes every missing folder (nested, repeated slashes, a trailing slash), is happy
// with folders that exist, and refuses a path through a file with -ENOTDIR.
#include "fs_dir.h" // defines: fs_mkdir_p

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fails;
static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	fails += !ok;
}
static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(void)
{
	char root[] = "/tmp/test_fs_dir.XXXXXX", p[512];
	if (!mkdtemp(root))
		return 1;
	snprintf(p, sizeof p, "%s/a/b/c", root);
	check(fs_mkdir_p(p, 0755) == 0 && is_dir(p), "nested folders are made");
	check(fs_mkdir_p(p, 0755) == 0, "an existing folder is fine");
	snprintf(p, sizeof p, "%s//x///y/", root);
	check(fs_mkdir_p(p, 0755) == 0 && is_dir(p), "repeated and trailing slashes");
	snprintf(p, sizeof p, "%s/file", root);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
	snprintf(p, sizeof p, "%s/file/sub", root);
	check(fs_mkdir_p(p, 0755) == -ENOTDIR, "a path through a file: -ENOTDIR");
	snprintf(p, sizeof p, "%s/file", root);
	check(fs_mkdir_p(p, 0755) == -ENOTDIR, "a file where the folder should be: -ENOTDIR");
	check(fs_mkdir_p("", 0755) == -EINVAL, "an empty path: -EINVAL");
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fails++;
	return fails ? 1 : 0;
}
