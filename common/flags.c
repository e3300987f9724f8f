// The flag engine: values are set through one parser (defaults too, so a default obeys its
// bounds), and --help and the log line are generated from the same table the parser reads.
#include "flags.h" // defines: FlagSpec, flags_parse, ...

#include <errno.h>  // defines: EINVAL, ENOMEM, ERANGE, errno
#include <math.h>   // defines: isfinite
#include <stdint.h> // defines: int64_t, uint64_t, INT_MAX
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: strtod, strtoll, strtoull
#include <string.h> // defines: strcmp, strncmp, strchr, strlen, memcpy

const FlagSpec *flags_find(const FlagSpec *t, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

static const FlagSpec *find_alias(const FlagSpec *t, int n, char c)
{
	for (int i = 0; i < n; i++)
		if (t[i].alias && t[i].alias == c)
			return &t[i];
	return NULL;
}

static int takes_value(const FlagSpec *f)
{
	return f->type != FLAG_SWITCH && f->type != FLAG_SET;
}

// the index of v in "a|b|c", or -1
static int choice_index(const char *choices, const char *v)
{
	size_t vl = strlen(v);
	int k = 0;
	for (const char *p = choices; p && *p; k++) {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);
		if (l == vl && !strncmp(p, v, l))
			return k;
		p = bar ? bar + 1 : NULL;
	}
	return -1;
}

static int set_string(const FlagSpec *f, char *p, const char *v, char *err, size_t errlen)
{
	int k = f->type == FLAG_CHOICE || f->type == FLAG_ENUM ? choice_index(f->choices, v) : 0;
	if (k < 0) {
		char list[256];
		size_t l = 0;
		for (const char *c = f->choices; *c && l + 3 < sizeof list; c++)
			if (*c == '|')
				list[l++] = ',', list[l++] = ' ';
			else
				list[l++] = *c;
		list[l] = 0;
		snprintf(err, errlen, "--%s '%s' is not one of %s", f->name, v, list);
		return -EINVAL;
	}
	if (f->type == FLAG_ENUM) {
		*(int *)p = k;
		return 0;
	}
	if (f->type == FLAG_STRPTR) {
		*(const char **)p = v;
		return 0;
	}
	if (f->size == 0 || strlen(v) >= f->size) {
		snprintf(err, errlen, "--%s: value longer than %zu characters", f->name, f->size ? f->size - 1 : 0);
		return -EINVAL;
	}
	memcpy(p, v, strlen(v) + 1);
	return 0;
}

static int set_switch(const FlagSpec *f, int *p, const char *v, char *err, size_t errlen)
{
	if (f->type == FLAG_SET) {
		if (v) {
			snprintf(err, errlen, "--%s takes no value, got '%s'", f->name, v);
			return -EINVAL;
		}
		*p = (int)f->lo;
		return 0;
	}
	if (!v || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"))
		*p = 1;
	else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no"))
		*p = 0;
	else {
		snprintf(err, errlen, "--%s is a switch: it takes no value, or 0 or 1, got '%s'", f->name, v);
		return -EINVAL;
	}
	return 0;
}

// integers through strtoll/strtoull so 64-bit values keep every digit; bounds as doubles
static int set_number(const FlagSpec *f, char *p, const char *v, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double d = 0;
	long long ll = 0;
	unsigned long long ull = 0;
	if (f->type == FLAG_DOUBLE)
		d = strtod(v, &end);
	else if (f->type == FLAG_U64 && v[0] != '-')
		d = (double)(ull = strtoull(v, &end, 10));
	else
		d = (double)(ll = strtoll(v, &end, 10));
	int bad = end == v || *end || errno == ERANGE || !isfinite(d) || (f->type == FLAG_U64 && v[0] == '-');
	if (!bad && f->type == FLAG_INT && (ll < -2147483647LL - 1 || ll > 2147483647LL))
		bad = 1;
	if (bad) {
		snprintf(err, errlen, "--%s wants %s, got '%s'", f->name,
			 f->type == FLAG_DOUBLE ? "a number"
			 : f->type == FLAG_U64  ? "a non-negative integer"
						: "an integer",
			 v);
		return -EINVAL;
	}
	if ((f->lo != 0 || f->hi != 0) && (d < f->lo || d > f->hi)) {
		snprintf(err, errlen, "--%s %s is outside [%.15g, %.15g]", f->name, v, f->lo, f->hi);
		return -ERANGE;
	}
	switch (f->type) {
	case FLAG_INT: *(int *)p = (int)ll; break;
	case FLAG_I64: *(int64_t *)p = (int64_t)ll; break;
	case FLAG_U64: *(uint64_t *)p = (uint64_t)ull; break;
	default: *(double *)p = d; break;
	}
	return 0;
}

int flags_set(const FlagSpec *f, void *cfg, const char *v, char *err, size_t errlen)
{
	char *p = (char *)cfg + f->off;
	if (!takes_value(f))
		return set_switch(f, (int *)p, v, err, errlen);
	if (!v) {
		snprintf(err, errlen, "--%s needs a value", f->name);
		return -EINVAL;
	}
	if (f->type >= FLAG_STRING)
		return set_string(f, p, v, err, errlen);
	return set_number(f, p, v, err, errlen);
}

int flags_defaults(const FlagSpec *t, int n, void *cfg, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++)
		if (t[i].def && takes_value(&t[i]) && flags_set(&t[i], cfg, t[i].def, err, errlen) < 0)
			return -EINVAL;
		else if (t[i].def && !takes_value(&t[i]) && t[i].type == FLAG_SWITCH)
			*(int *)((char *)cfg + t[i].off) = strcmp(t[i].def, "0") != 0;
	return 0;
}

// edit distance of a and b, capped (names are short)
static int distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), row[64];
	if (la > 62 || lb > 62)
		return 99;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static void unknown_in(const FlagTable *tabs, int ntabs, const char *name, char *err, size_t errlen)
{
	const FlagSpec *best = NULL;
	int bd = 3; // a suggestion only when at most two edits away
	for (int k = 0; k < ntabs; k++)
		for (int i = 0; i < tabs[k].n; i++) {
			const FlagSpec *f = &tabs[k].t[i];
			int d = distance(name, f->name);
			if (d < bd)
				bd = d, best = f->renamed ? flags_find(tabs[k].t, tabs[k].n, f->renamed) : f;
		}
	if (best)
		snprintf(err, errlen, "unknown flag --%s (did you mean --%s?)", name, best->name);
	else
		snprintf(err, errlen, "unknown flag --%s (see --help)", name);
}

static void unknown(const FlagSpec *t, int n, const char *name, char *err, size_t errlen)
{
	FlagTable one = {t, n};
	unknown_in(&one, 1, name, err, errlen);
}

// "--no-NAME" of a switch NAME
static const FlagSpec *negated(const FlagSpec *t, int n, const char *name)
{
	if (strncmp(name, "no-", 3))
		return NULL;
	const FlagSpec *f = flags_find(t, n, name + 3);
	return f && f->type == FLAG_SWITCH ? f : NULL;
}

// the entry called name (or the switch that --name negates) in the first table that has it
static const FlagSpec *find_split(const FlagTable *tabs, int ntabs, const char *name)
{
	for (int k = 0; k < ntabs; k++) {
		const FlagSpec *f = flags_find(tabs[k].t, tabs[k].n, name);
		if (!f)
			f = negated(tabs[k].t, tabs[k].n, name);
		if (f)
			return f;
	}
	return NULL;
}

int flags_split_in(const FlagTable *tabs, int ntabs, int argc, char **argv, int *i, char *name, size_t nlen,
		   const char **value, char *err, size_t errlen)
{
	const char *a = argv[*i];
	const FlagSpec *f = NULL;
	*value = NULL;
	if (a[0] == '-' && a[1] && a[1] != '-') {
		for (int k = 0; k < ntabs && !f; k++)
			f = find_alias(tabs[k].t, tabs[k].n, a[1]);
	}
	if (f) { // -n, -j 4, -j4
		snprintf(name, nlen, "%s", f->name);
		if (takes_value(f) && a[2])
			*value = a + 2;
		else if (a[2]) {
			snprintf(err, errlen, "-%c takes no value, got '%s'", a[1], a);
			return -EINVAL;
		}
	} else if (strncmp(a, "--", 2) || !a[2]) {
		return 1;
	} else {
		a += 2;
		const char *eq = strchr(a, '=');
		size_t l = eq ? (size_t)(eq - a) : strlen(a);
		if (l >= nlen) {
			snprintf(err, errlen, "unknown flag --%.40s...", a);
			return -EINVAL;
		}
		memcpy(name, a, l);
		name[l] = 0;
		f = find_split(tabs, ntabs, name); // --no-NAME of a switch takes no value, as the switch
		if (eq) {
			*value = eq + 1;
			return 0;
		}
	}
	if ((f && !takes_value(f)) || (!f && *i + 1 >= argc)) // an unknown last flag: the caller names it
		return 0;
	if (!*value && *i + 1 >= argc) {
		snprintf(err, errlen, "--%s needs a value", name);
		return -EINVAL;
	}
	if (!*value)
		*value = argv[++*i];
	return 0;
}

int flags_split(const FlagSpec *t, int n, int argc, char **argv, int *i, char *name, size_t nlen, const char **value,
		char *err, size_t errlen)
{
	FlagTable one = {t, n};
	return flags_split_in(&one, 1, argc, argv, i, name, nlen, value, err, errlen);
}

int flags_parse(const FlagSpec *t, int n, void *cfg, int argc, char **argv, FlagRest *rest, char *err, size_t errlen)
{
	if (flags_defaults(t, n, cfg, err, errlen) < 0)
		return -EINVAL;
	if (rest)
		rest->n_pos = rest->n_unknown = 0;
	// this table, then the ones a later pass reads: their switches take no value here either
	FlagTable tabs[1 + FLAGS_MAX_ALSO] = {{t, n}};
	int ntabs = 1;
	if (rest && rest->keep_unknown)
		for (int k = 0; k < rest->n_also && k < FLAGS_MAX_ALSO; k++)
			tabs[ntabs++] = rest->also[k];
	int flags_done = 0;
	for (int i = 1; i < argc; i++) {
		char name[64];
		const char *v;
		int rc = flags_done ? 1 : !strcmp(argv[i], "--") ? (flags_done = 1, 2) : 0;
		if (rc == 2)
			continue;
		if (rc == 0 && !strncmp(argv[i], "--no-", 5) && !strchr(argv[i], '=') && negated(t, n, argv[i] + 2)) {
			*(int *)((char *)cfg + negated(t, n, argv[i] + 2)->off) = 0;
			continue;
		}
		if (rc == 0 &&
		    (rc = flags_split_in(tabs, ntabs, argc, argv, &i, name, sizeof name, &v, err, errlen)) < 0)
			return -EINVAL;
		if (rc == 1) {
			if (!rest || !rest->pos || rest->n_pos >= rest->max_pos) {
				snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[i]);
				return -EINVAL;
			}
			rest->pos[rest->n_pos++] = argv[i];
			continue;
		}
		const FlagSpec *f = flags_find(t, n, name);
		if (!f && rest && rest->keep_unknown) {
			rest->n_unknown++;
			continue;
		}
		if (!f) {
			unknown(t, n, name, err, errlen);
			return -EINVAL;
		}
		if (flags_set(f, cfg, v, err, errlen) < 0)
			return -EINVAL;
	}
	return 0;
}

// the entry called name in any of the tables, or NULL
static const FlagSpec *find_in(const FlagTable *tabs, int ntabs, const char *name)
{
	for (int k = 0; k < ntabs; k++) {
		const FlagSpec *f = flags_find(tabs[k].t, tabs[k].n, name);
		if (f)
			return f;
	}
	return NULL;
}

int flags_check_known(const FlagTable *tabs, int ntabs, int argc, char **argv, char *err, size_t errlen)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			return 0;
		if (a[0] != '-' || !a[1])
			continue;  // a positional argument: the parser decides
		if (a[1] != '-') { // -j 4, -n: a value follows an alias that takes one
			for (int k = 0; k < ntabs; k++) {
				const FlagSpec *f = find_alias(tabs[k].t, tabs[k].n, a[1]);
				if (f) {
					i += takes_value(f) && !a[2];
					break;
				}
			}
			continue;
		}
		char name[64];
		const char *eq = strchr(a + 2, '=');
		size_t l = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), a + 2);
		const FlagSpec *f = find_in(tabs, ntabs, name);
		if (!f && !strncmp(name, "no-", 3)) {
			const FlagSpec *g = find_in(tabs, ntabs, name + 3);
			if (g && g->type == FLAG_SWITCH)
				continue;
		}
		if (!f) {
			unknown_in(tabs, ntabs, name, err, errlen);
			return -EINVAL;
		}
		i += !eq && takes_value(f);
	}
	return 0;
}

int flags_renamed_used(const FlagSpec *t, int n, int argc, char **argv, char *msg, size_t len)
{
	for (int i = 1; i < argc; i++) {
		char name[64], err[128];
		const char *v;
		if (!strcmp(argv[i], "--"))
			return 0;
		if (flags_split(t, n, argc, argv, &i, name, sizeof name, &v, err, sizeof err) != 0)
			continue;
		const FlagSpec *f = flags_find(t, n, name);
		if (f && f->renamed) {
			snprintf(msg, len, "--%s is now called --%s; the old name goes away in a later release",
				 f->name, f->renamed);
			return 1;
		}
	}
	return 0;
}
