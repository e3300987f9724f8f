// The trainer's queries (trainer_query.h): one table of name, the switch it sets, its usage and
// the flag it replaced.
#include "trainer_query.h" // defines: trainer_query_take, trainer_query_set, trainer_query_help

#include <errno.h>  // defines: EINVAL
#include <stddef.h> // defines: offsetof
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: strcmp, strncmp, strlen, memmove

typedef struct {
	const char *name, *old; // the query, and the flag that was its mode before
	size_t field;           // its int switch in TrainerConfig
	const char *usage, *help;
} Query;

#define Q(f) offsetof(TrainerConfig, f)
static const Query queries[] = {
	{"geometry", "--print-geometry", Q(print_geometry), "[model flags]",
	 "the ring geometry the model needs, as ringctl flags: --frames T --height H --width W --text-len L"},
	{"steps", "--print-steps", Q(print_steps), "[run flags]",
	 "'steps S steps-per-epoch E' of this run (--steps or --epochs, --dataset-size, --batch-size, --ranks)"},
	{"params", "--print-params", Q(print_params), "[model flags]",
	 "the parameter counts of the model as one JSON line (total, visual, text)"},
	{"fit-batch", "--fit-batch", Q(fit_batch), "[model flags] --batch-size B [--memory-limit G]",
	 "opens the device and prints the largest batch (at most B) whose step fits its free memory"},
	{"resume-position", "--resume-position", Q(resume_position), "--run-dir DIR",
	 "the ring --first-position resuming DIR needs (0: a fresh start)"},
	{"check-start", "--check-start", Q(check_start), "[run flags]",
	 "what a start of this run would refuse (vocabularies, --init-from, a resume's batch), before anything "
	 "starts; logs what --init-from loads"},
	{"comm-create", "--comm-create", Q(comm_create), "--comm NAME --ranks N",
	 "(re)creates the CPU ranks' shared-memory group, before every start of the ranks"},
	{"comm-unlink", "--comm-unlink", Q(comm_unlink), "--comm NAME", "removes that group"},
};
#undef Q
enum { NQUERIES = sizeof queries / sizeof queries[0] };

static int names(char *buf, size_t len)
{
	size_t n = 0;
	for (int q = 0; q < NQUERIES && n < len; q++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", q ? " | " : "", queries[q].name);
	return (int)n;
}

int trainer_query_take(int *argc, char **argv, char *err, size_t errlen)
{
	char all[256];
	names(all, sizeof all);
	for (int i = 1; i < *argc; i++)
		for (int q = 0; q < NQUERIES; q++) {
			size_t l = strlen(queries[q].old);
			if (!strncmp(argv[i], queries[q].old, l) && (!argv[i][l] || argv[i][l] == '=')) {
				snprintf(err, errlen, "%s is now a query: trainer query %s %s", queries[q].old,
					 queries[q].name, queries[q].usage);
				return -EINVAL;
			}
		}
	if (*argc < 2 || strcmp(argv[1], "query"))
		return -1;
	if (*argc < 3 || argv[2][0] == '-') {
		snprintf(err, errlen, "trainer query: which? %s", all);
		return -EINVAL;
	}
	for (int q = 0; q < NQUERIES; q++)
		if (!strcmp(argv[2], queries[q].name)) {
			memmove(argv + 1, argv + 3, sizeof(char *) * (size_t)(*argc - 3 + 1)); // with argv[argc]
			*argc -= 2;
			return q;
		}
	snprintf(err, errlen, "trainer query: unknown query '%s' (%s)", argv[2], all);
	return -EINVAL;
}

void trainer_query_set(TrainerConfig *cfg, int q)
{
	if (q >= 0 && q < NQUERIES)
		*(int *)((char *)cfg + queries[q].field) = 1;
}

int trainer_query_help(char *buf, size_t len)
{
	size_t n = 0;
	for (int q = 0; q < NQUERIES && n < len; q++)
		n += (size_t)snprintf(buf + n, len - n, "       trainer query %s %s\n           %s\n", queries[q].name,
				      queries[q].usage, queries[q].help);
	return (int)n;
}
