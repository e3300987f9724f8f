// A tool's command line in one call (flags.h: flags_tool): the table parsed into the tool's
// options, a bad flag refused with one sentence, --help answered with the synopsis and the flags.
#include "flags.h" // defines: FlagTool, flags_tool, flags_tool_usage, flags_parse, flags_help, flags_find
#include "log.h"   // defines: log_fatalx

#include <stdio.h>  // defines: FILE, fprintf, fputs
#include <stdlib.h> // defines: malloc, free, exit

void flags_tool_usage(const FlagTool *t, FILE *f)
{
	const int n = flags_help(t->table, t->n, NULL, 0);
	char *buf = malloc((size_t)n + 1);
	if (buf)
		flags_help(t->table, t->n, buf, (size_t)n + 1);
	fprintf(f, "%s\n%s", t->synopsis, buf ? buf : "");
	free(buf);
}

void flags_tool(const FlagTool *t, void *cfg, int argc, char **argv, FlagRest *rest)
{
	char err[512];
	if (flags_parse(t->table, t->n, cfg, argc, argv, rest, err, sizeof err) < 0)
		log_fatalx("%s", err);
	const FlagSpec *h = flags_find(t->table, t->n, "help");
	if (h && h->type == FLAG_SWITCH && *(const int *)((const char *)cfg + h->off)) {
		flags_tool_usage(t, stdout);
		exit(0);
	}
}
