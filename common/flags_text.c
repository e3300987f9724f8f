// What the flag engine writes and reads as text besides argv: the --help lines, the
// effective-configuration log line, and config files of "name value" lines turned into argv.
#include "flags.h"  // defines: FlagSpec, flags_help, flags_describe, flags_config_argv
#include "fs_dir.h" // defines: fs_fopen_read, fs_strerror

#include <errno.h>  // defines: EINVAL, ENOMEM, errno
#include <stdint.h> // defines: int64_t, uint64_t
#include <stdio.h>  // defines: snprintf, fopen, fgets
#include <stdlib.h> // defines: malloc, realloc, free
#include <string.h> // defines: strlen, strchr, strspn, strcspn, strcmp, strncmp, strerror

enum { HELP_COL_MAX = 30, HELP_WIDTH = 100 };

// "--name INT" (the value's placeholder says its type, the same in every program)
static int left_part(const FlagSpec *f, char *buf, size_t len)
{
	static const char *const ph[] = {
		[FLAG_SWITCH] = "",  [FLAG_SET] = "",        [FLAG_INT] = " INT",    [FLAG_I64] = " INT",
		[FLAG_U64] = " INT", [FLAG_DOUBLE] = " NUM", [FLAG_STRING] = " STR", [FLAG_STRPTR] = " STR",
		[FLAG_CHOICE] = " ", [FLAG_ENUM] = " "};
	char alias[8] = "";
	if (f->alias)
		snprintf(alias, sizeof alias, "-%c, ", f->alias);
	return snprintf(buf, len, "%s--%s%s%s", alias, f->name, ph[f->type], f->type >= FLAG_CHOICE ? f->choices : "");
}

// the help text with its bounds and default appended
static void help_text(const FlagSpec *f, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", f->help ? f->help : "");
	int numeric = f->type >= FLAG_INT && f->type <= FLAG_DOUBLE;
	if (numeric && (f->lo != 0 || f->hi != 0) && n < len)
		n += (size_t)snprintf(buf + n, len - n, f->hi >= 4294967295.0 ? " [%.15g, ...]" : " [%.15g, %.15g]",
				      f->lo, f->hi);
	if (f->def && f->def[0] && f->type != FLAG_SET && n < len) {
		const char *d = f->type == FLAG_SWITCH ? (strcmp(f->def, "0") ? "on" : "") : f->def;
		if (*d)
			snprintf(buf + n, len - n, " (default %s)", d);
	}
}

// appends s to buf at *n as snprintf would, counting what did not fit
static void put(char *buf, size_t len, size_t *n, const char *s, size_t l)
{
	if (*n < len) {
		size_t k = l < len - *n - 1 ? l : len - *n - 1;
		memcpy(buf + *n, s, k);
		buf[*n + k] = 0;
	}
	*n += l;
}

int flags_help(const FlagSpec *t, int n, char *buf, size_t len)
{
	int col = 0;
	char left[160], text[2048];
	for (int i = 0; i < n; i++) {
		if (t[i].renamed)
			continue;
		int l = left_part(&t[i], left, sizeof left) + 4;
		if (l > col && l <= HELP_COL_MAX)
			col = l;
	}
	size_t w = 0;
	if (len)
		buf[0] = 0;
	for (int i = 0; i < n; i++) {
		if (t[i].renamed)
			continue;
		int l = left_part(&t[i], left, sizeof left);
		help_text(&t[i], text, sizeof text);
		char pad[160];
		int at = 2 + l;
		put(buf, len, &w, "  ", 2);
		put(buf, len, &w, left, (size_t)l);
		if (at + 2 > col) { // too long for the column: the help starts on the next line
			put(buf, len, &w, "\n", 1);
			at = 0;
		}
		memset(pad, ' ', sizeof pad);
		put(buf, len, &w, pad, (size_t)(col - at));
		// words wrapped at HELP_WIDTH, continuation lines in the same column
		int x = col;
		for (const char *p = text; *p;) {
			size_t wl = strcspn(p, " ");
			if (x > col && x + 1 + (int)wl > HELP_WIDTH) {
				put(buf, len, &w, "\n", 1);
				put(buf, len, &w, pad, (size_t)col);
				x = col;
			} else if (x > col) {
				put(buf, len, &w, " ", 1);
				x++;
			}
			put(buf, len, &w, p, wl);
			x += (int)wl;
			p += wl;
			p += strspn(p, " ");
		}
		put(buf, len, &w, "\n", 1);
	}
	return (int)w;
}

int flags_describe(const FlagSpec *t, int n, const void *cfg, char *buf, size_t len)
{
	size_t w = 0;
	if (len)
		buf[0] = 0;
	for (int i = 0; i < n; i++) {
		const FlagSpec *f = &t[i];
		const char *p = (const char *)cfg + f->off;
		const char *sep = w ? " " : "";
		char one[1200];
		if ((f->attr & FLAG_NO_LOG) || f->renamed)
			continue;
		switch (f->type) {
		case FLAG_SET:
			if (*(const int *)p != (int)f->lo)
				continue;
			snprintf(one, sizeof one, "%s%s", sep, f->name);
			break;
		case FLAG_SWITCH:
		case FLAG_INT: snprintf(one, sizeof one, "%s%s=%d", sep, f->name, *(const int *)p); break;
		case FLAG_I64:
			snprintf(one, sizeof one, "%s%s=%lld", sep, f->name, (long long)*(const int64_t *)p);
			break;
		case FLAG_U64:
			snprintf(one, sizeof one, "%s%s=%llu", sep, f->name, (unsigned long long)*(const uint64_t *)p);
			break;
		case FLAG_DOUBLE: snprintf(one, sizeof one, "%s%s=%g", sep, f->name, *(const double *)p); break;
		case FLAG_STRPTR: {
			const char *s = *(const char *const *)p;
			snprintf(one, sizeof one, "%s%s=%s", sep, f->name, s ? s : "");
			break;
		}
		case FLAG_ENUM: { // the index's name in "a|b|c"
			const char *c = f->choices;
			for (int k = *(const int *)p; k > 0 && c; k--)
				c = strchr(c, '|') ? strchr(c, '|') + 1 : NULL;
			snprintf(one, sizeof one, "%s%s=%.*s", sep, f->name, c ? (int)strcspn(c, "|") : 0, c ? c : "");
			break;
		}
		default: snprintf(one, sizeof one, "%s%s=%s", sep, f->name, p); break;
		}
		put(buf, len, &w, one, strlen(one));
	}
	return (int)w;
}

// the value of --flag FILE / --flag=FILE in argv, or NULL
static const char *config_path(const char *flag, int argc, char **argv)
{
	size_t fl = strlen(flag);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--", 2) || strncmp(a + 2, flag, fl))
			continue;
		if (!a[2 + fl] && i + 1 < argc)
			return argv[i + 1];
		if (a[2 + fl] == '=')
			return a + 3 + fl;
	}
	return NULL;
}

// one config line as "--name=value" appended to *buf; 0 blank line, 1 appended, <0 error
static int config_line(const char *flag, char *line, char **buf, size_t *used, size_t *cap)
{
	char *h = strchr(line, '#');
	if (h)
		*h = 0;
	char *k = line + strspn(line, " \t\r\n");
	if (!*k)
		return 0;
	size_t kl = strcspn(k, " \t\r\n=");
	char *v = k + kl;
	v += strspn(v, " \t=");
	v[strcspn(v, "\r\n")] = 0;
	for (size_t e = strlen(v); e > 0 && (v[e - 1] == ' ' || v[e - 1] == '\t'); e--)
		v[e - 1] = 0;
	k[kl] = 0;
	if (!strncmp(k, "--", 2))
		k += 2;
	if (!*k || !strcmp(k, flag))
		return -EINVAL;
	size_t need = strlen(k) + strlen(v) + 4;
	if (*used + need > *cap) {
		char *nb = realloc(*buf, *cap = 2 * (*cap + need));
		if (!nb)
			return -ENOMEM;
		*buf = nb;
	}
	*used += (size_t)snprintf(*buf + *used, *cap - *used, *v ? "--%s=%s" : "--%s", k, v) + 1;
	return 1;
}

int flags_config_argv(const char *flag, int argc, char **argv, int *oargc, char ***oargv, char **mem, char *err,
		      size_t errlen)
{
	const char *path = config_path(flag, argc, argv);
	*mem = NULL;
	*oargv = NULL;
	if (!path)
		return 0;
	FILE *f = fs_fopen_read(path, "r");
	if (!f) {
		snprintf(err, errlen, "--%s %s: %s", flag, path, fs_strerror(errno));
		return -EINVAL;
	}
	size_t cap = 4096, used = 0;
	char *buf = malloc(cap), line[1024];
	int n = 0, lineno = 0, rc = buf ? 0 : -ENOMEM;
	while (rc >= 0 && fgets(line, sizeof line, f)) {
		lineno++;
		rc = config_line(flag, line, &buf, &used, &cap);
		n += rc > 0;
	}
	fclose(f);
	char **av = rc >= 0 ? malloc(sizeof(char *) * (size_t)(argc + n)) : NULL;
	if (!av) {
		if (rc == -EINVAL)
			snprintf(err, errlen, "--%s %s line %d: expected 'name value'", flag, path, lineno);
		else
			snprintf(err, errlen, "--%s %s: out of memory", flag, path);
		free(buf);
		return rc == -EINVAL ? -EINVAL : -ENOMEM;
	}
	int j = 0;
	av[j++] = argv[0];
	for (size_t off = 0; off < used; off += strlen(buf + off) + 1)
		av[j++] = buf + off;
	for (int i = 1; i < argc; i++)
		av[j++] = argv[i];
	*oargc = j;
	*oargv = av;
	*mem = buf;
	return 0;
}
