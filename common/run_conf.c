// launch.conf holds shell assignments "KEY=value KEY=value" on a line, values quoted with
// printf %q: backslash escapes for the characters a path may carry, $'...' for control bytes.
#include "run_conf.h" // defines: run_conf_get
#include "fs_dir.h"   // defines: fs_fopen_read

#include <errno.h>  // defines: ENOENT, ESRCH, ENAMETOOLONG, EINVAL
#include <stdio.h>  // defines: fopen, fgets, snprintf
#include <string.h> // defines: strlen, strncmp

// one value starting at p: until unquoted whitespace, backslashes undone
static int copy_value(const char *p, char *out, size_t len)
{
	if (p[0] == '$' && p[1] == '\'')
		return -EINVAL;
	size_t n = 0;
	for (; *p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r'; p++) {
		if (*p == '\\' && p[1])
			p++;
		if (n + 1 >= len)
			return -ENAMETOOLONG;
		out[n++] = *p;
	}
	out[n] = 0;
	return 0;
}

int run_conf_get(const char *run_dir, const char *key, char *out, size_t len)
{
	char path[4200], line[16384];
	snprintf(path, sizeof path, "%s/launch.conf", run_dir);
	FILE *f = fs_fopen_read(path, "r");
	if (!f)
		return -ENOENT;
	const size_t kl = strlen(key);
	int rc = -ESRCH;
	while (rc == -ESRCH && fgets(line, sizeof line, f)) {
		if (line[0] == '#')
			continue;
		// a key starts the line or follows a space, and is followed by '='
		for (char *p = line; *p && rc == -ESRCH; p++)
			if ((p == line || p[-1] == ' ') && !strncmp(p, key, kl) && p[kl] == '=')
				rc = copy_value(p + kl + 1, out, len);
	}
	fclose(f);
	return rc;
}
