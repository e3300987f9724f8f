// The launcher syntaxes the rendezvous reads without calling Slurm's tools: compressed host
// lists ("node[01-04,07],gpu5"), tasks per node ("4(x2),3"), and the job token.
#include "comm.h"     // defines: rdv_hostlist_count, rdv_hostlist_nth, rdv_tasks_per_node
#include "hash_fnv.h" // defines: fnv1a64_str

#include <ctype.h>
#include <errno.h>
#include <string.h>

#define MAX_GROUPS 8          // bracket groups in one host name
#define MAX_NUMBER 999999999L // digits in a range: at most 9

// a bracket group "[01-04,07]": its inside, and how many numbers it stands for
typedef struct {
	const char *in, *end; // between the brackets
	long count;
} Group;

// "07" or "01-04" at *p (up to a ',' or the group's end): bounds and the lower bound's digits
static int range_parse(const char **p, const char *end, long *lo, long *hi, int *width)
{
	const char *s = *p;
	long v[2] = {0, 0};
	int n = 0;
	for (int part = 0; part < 2; part++) {
		const char *d = s;
		while (s < end && isdigit((unsigned char)*s)) {
			v[part] = v[part] * 10 + (*s++ - '0');
			if (s - d > 9)
				return -EINVAL;
		}
		if (s == d)
			return -EINVAL;
		if (part == 0)
			*width = (int)(s - d);
		n++;
		if (s < end && *s == '-' && part == 0) {
			s++;
			continue;
		}
		break;
	}
	if (s < end && *s != ',')
		return -EINVAL;
	*lo = v[0];
	*hi = n == 2 ? v[1] : v[0];
	if (*hi < *lo || *hi > MAX_NUMBER)
		return -EINVAL;
	*p = s;
	return 0;
}

static int group_count(Group *g)
{
	g->count = 0;
	if (g->in == g->end)
		return -EINVAL;
	for (const char *p = g->in; p < g->end;) {
		long lo, hi;
		int w;
		if (range_parse(&p, g->end, &lo, &hi, &w) < 0)
			return -EINVAL;
		g->count += hi - lo + 1;
		if (p < g->end && ++p == g->end) // "[1,]"
			return -EINVAL;
	}
	return 0;
}

// the k-th number of a group, zero padded to its range's lower bound, appended at out[*at]
static int group_pick(const Group *g, long k, char *out, size_t cap, size_t *at)
{
	for (const char *p = g->in; p < g->end;) {
		long lo, hi;
		int w;
		range_parse(&p, g->end, &lo, &hi, &w); // checked by group_count
		if (k <= hi - lo) {
			char num[16];
			int n = 0;
			long v = lo + k;
			do
				num[n++] = (char)('0' + v % 10);
			while ((v /= 10) > 0);
			while (n < w)
				num[n++] = '0';
			if (*at + (size_t)n >= cap)
				return -ENAMETOOLONG;
			while (n > 0)
				out[(*at)++] = num[--n];
			return 0;
		}
		k -= hi - lo + 1;
		if (p < g->end)
			p++;
	}
	return -ERANGE;
}

// One host-list item s[0, n) ("rack[1-2]n[01-04]"): *count hosts; with out, host k written there.
static int item_walk(const char *s, size_t n, long k, char *out, size_t cap, long *count)
{
	Group g[MAX_GROUPS];
	int ng = 0;
	long total = 1;
	const char *end = s + n;
	if (n == 0)
		return -EINVAL;
	for (const char *p = s; p < end; p++) {
		if (*p == ']' || isspace((unsigned char)*p))
			return -EINVAL;
		if (*p != '[')
			continue;
		const char *close = memchr(p, ']', (size_t)(end - p));
		if (!close || ng == MAX_GROUPS || memchr(p + 1, '[', (size_t)(close - p - 1)))
			return -EINVAL;
		g[ng] = (Group){.in = p + 1, .end = close};
		if (group_count(&g[ng]) < 0 || total > MAX_NUMBER / g[ng].count)
			return -EINVAL;
		total *= g[ng++].count;
		p = close;
	}
	*count = total;
	if (!out)
		return 0;
	if (k >= total)
		return -ERANGE;
	long pick[MAX_GROUPS];
	for (int i = ng - 1; i >= 0; i--) { // the last bracket varies fastest
		pick[i] = k % g[i].count;
		k /= g[i].count;
	}
	size_t at = 0;
	int gi = 0;
	for (const char *p = s; p < end; p++) {
		if (*p == '[') {
			int rc = group_pick(&g[gi], pick[gi], out, cap, &at);
			if (rc < 0)
				return rc;
			p = g[gi++].end;
			continue;
		}
		if (at + 1 >= cap)
			return -ENAMETOOLONG;
		out[at++] = *p;
	}
	out[at] = '\0';
	return 0;
}

// Splits the list at commas outside brackets and walks every item (a malformed one anywhere
// refuses the list); with out, host n is written there.
static int list_walk(const char *list, long n, char *out, size_t cap, long *count)
{
	int found = -ERANGE;
	*count = 0;
	if (!list || !*list)
		return -EINVAL;
	const char *p = list;
	for (;;) {
		const char *q = p;
		int depth = 0;
		while (*q && (depth || *q != ',')) {
			depth += *q == '[' ? 1 : *q == ']' ? -1 : 0;
			if (depth < 0 || depth > 1)
				return -EINVAL;
			q++;
		}
		if (depth)
			return -EINVAL;
		long c;
		int rc = item_walk(p, (size_t)(q - p), 0, NULL, 0, &c);
		if (rc < 0)
			return rc;
		if (out && n >= *count && n < *count + c)
			found = item_walk(p, (size_t)(q - p), n - *count, out, cap, &c);
		*count += c;
		if (!*q)
			break;
		p = q + 1;
	}
	return out ? found : 0;
}

long rdv_hostlist_count(const char *list)
{
	long count;
	int rc = list_walk(list, 0, NULL, 0, &count);
	return rc < 0 ? rc : count;
}

int rdv_hostlist_nth(const char *list, long n, char *out, size_t outlen)
{
	long count;
	if (n < 0 || !out || outlen == 0)
		return -EINVAL;
	return list_walk(list, n, out, outlen, &count);
}

int rdv_tasks_per_node(const char *s, int node, int *tasks, int *nodes_total, long *tasks_total)
{
	long nodes = 0, sum = 0;
	int found = -1;
	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s;;) {
		long v = 0, rep = 1;
		const char *d = p;
		while (isdigit((unsigned char)*p) && p - d < 7)
			v = v * 10 + (*p++ - '0');
		if (p == d || v == 0 || isdigit((unsigned char)*p))
			return -EINVAL;
		if (*p == '(') {
			if (p[1] != 'x' || !isdigit((unsigned char)p[2]))
				return -EINVAL;
			rep = 0;
			for (p += 2, d = p; isdigit((unsigned char)*p) && p - d < 7;)
				rep = rep * 10 + (*p++ - '0');
			if (*p++ != ')' || rep == 0)
				return -EINVAL;
		}
		if (node >= nodes && node < nodes + rep)
			found = (int)v;
		nodes += rep;
		sum += v * rep;
		if (nodes > 1000000)
			return -EINVAL;
		if (!*p)
			break;
		if (*p++ != ',' || !*p)
			return -EINVAL;
	}
	if (nodes_total)
		*nodes_total = (int)nodes;
	if (tasks_total)
		*tasks_total = sum;
	if (node >= 0 && found < 0)
		return -ERANGE;
	if (tasks && node >= 0)
		*tasks = found;
	return 0;
}

uint64_t rdv_job_token(const char *job)
{
	uint64_t h = fnv1a64_str(job);
	return h ? h : 1;
}
