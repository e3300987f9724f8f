// One flag engine for every program: a table of {name, type, field, bounds, default, help}
// parses argv (--name value, --name=value), fills a config struct, and generates --help and the log line.
#ifndef COMMON_FLAGS_H
#define COMMON_FLAGS_H
// defines: FlagType, FlagSpec, FlagRest, FlagTable, FLAG_AT, FLAG_NO_LOG, flags_defaults, flags_set, flags_find,
//          flags_parse, flags_split, flags_split_in, flags_check_known, flags_renamed_used, flags_help, flags_describe,
//          flags_config_argv, FlagTool, flags_tool, flags_tool_usage

#include <stddef.h> // defines: size_t, offsetof
#include <stdio.h>  // defines: FILE

typedef enum {
	FLAG_SWITCH, // int 0/1: --name sets it, --no-name clears it, --name=0|1 from a config file
	FLAG_SET,    // int: --name stores `lo` (e.g. --train / --eval into one field); takes no value
	FLAG_INT,    // int
	FLAG_I64,    // int64_t
	FLAG_U64,    // uint64_t
	FLAG_DOUBLE, // double
	FLAG_STRING, // char[size]: a copy
	FLAG_STRPTR, // const char *: points into argv (or at the default), no copy, no length limit
	FLAG_CHOICE, // char[size], refused unless one of `choices` ("a|b|c")
	FLAG_ENUM,   // int (or an enum): the index of the value in `choices` ("a|b|c": a is 0)
} FlagType;

enum { FLAG_NO_LOG = 1 }; // FlagSpec.attr: left out of flags_describe (modes such as --help)

typedef struct {
	const char *name; // without the dashes
	FlagType type;
	size_t off, size; // the field: offset in the config struct, its size (FLAG_AT)
	double lo, hi;    // numeric bounds, both 0: unbounded; FLAG_SET: the value stored
	const char *def;  // the default as text, set through the same parser (NULL: field left as is)
	const char *help;
	const char
		*choices; // FLAG_CHOICE, FLAG_ENUM: "a|b|c" (also the placeholder in --help: others show INT, NUM, STR)
	char alias;       // a one-letter short form (-n, -j 4), 0: none
	unsigned attr;    // FLAG_NO_LOG
	const char *renamed; // an old name kept for a while: the entry's new name (left out of --help and the log)
} FlagSpec;

// one of the tables a program reads its flags from (the trainer: its own, the model's, FastCLIP's)
typedef struct {
	const FlagSpec *t;
	int n;
} FlagTable;

// offset and size of field f of struct type T, for FlagSpec.off/.size
#define FLAG_AT(T, f) offsetof(T, f), sizeof(((T *)0)->f)

// What flags_parse hands back besides the flags: positional arguments (refused when pos is NULL)
// and, with keep_unknown, the count of flags the table does not name (left for the caller's
// own pass with flags_split_in; each consumes the next argument unless written --name=value or
// a switch, or --no-NAME of one, of the tables in also: the ones that later pass reads).
enum { FLAGS_MAX_ALSO = 7 };
typedef struct {
	const char **pos;
	int max_pos, n_pos;
	int keep_unknown, n_unknown;
	const FlagTable *also; // at most FLAGS_MAX_ALSO
	int n_also;
} FlagRest;

// Every default of the table into cfg. 0, or -EINVAL with err naming the entry (a table bug).
int flags_defaults(const FlagSpec *t, int n, void *cfg, char *err, size_t errlen);
// The entry called name, or NULL.
const FlagSpec *flags_find(const FlagSpec *t, int n, const char *name);
// One value into its field; value NULL for a flag written without one (switches, FLAG_SET).
// 0; -EINVAL with err as "--batch-size wants an integer, got 'abc'"; -ERANGE naming the bounds.
int flags_set(const FlagSpec *f, void *cfg, const char *value, char *err, size_t errlen);
// Defaults, then argv[1..argc). 0; -EINVAL with one sentence in err (unknown flags name the
// nearest table entry when one is close: "unknown flag --batchsize (did you mean --batch-size?)").
int flags_parse(const FlagSpec *t, int n, void *cfg, int argc, char **argv, FlagRest *rest, char *err, size_t errlen);
// Splits argv[*i] into name and value, consuming argv[*i + 1] when the flag takes one (a switch
// and --no-NAME of a switch take none; a flag the table does not name takes one, if there is one).
// *value NULL: written without one. Not a flag: 1 (a positional argument, name unset). 0, or
// -EINVAL ("--x needs a value").
int flags_split(const FlagSpec *t, int n, int argc, char **argv, int *i, char *name, size_t nlen, const char **value,
		char *err, size_t errlen);
// The same over several tables (a program whose flags are in several, read in one pass each):
// the flag's entry is looked up in each, so a switch of any of them takes no value.
int flags_split_in(const FlagTable *tabs, int ntabs, int argc, char **argv, int *i, char *name, size_t nlen,
		   const char **value, char *err, size_t errlen);
// Every flag of argv[1..argc) (up to "--") is named by one of the tables (--no-NAME of a switch
// counts): 0, or -EINVAL with err "unknown flag --manfest (did you mean --manifest?)", the nearest
// name over all tables. Programs with flags in several tables call it before any other check, so a
// misspelt flag is reported as such and not as the required flag it was meant to be.
int flags_check_known(const FlagTable *tabs, int ntabs, int argc, char **argv, char *err, size_t errlen);
// 1 when argv gives a flag by a table entry's old name (FlagSpec.renamed), with msg saying
// "--threads is now called --workers; the old name goes away in a later release"; else 0.
int flags_renamed_used(const FlagSpec *t, int n, int argc, char **argv, char *msg, size_t len);
// The flag lines of --help: "  --name TYPE   help (default D) [lo, hi]", help aligned in one
// column and wrapped at 100. The characters written (as snprintf: may exceed len).
int flags_help(const FlagSpec *t, int n, char *buf, size_t len);
// "name=value name=value ..." of every entry but FLAG_NO_LOG ones (switches and FLAG_SET print
// their name when set), for the effective-configuration log line. The characters written.
int flags_describe(const FlagSpec *t, int n, const void *cfg, char *buf, size_t len);
// A config file (`flag` names it: argv's --flag FILE) as "--name=value" arguments placed
// before the command line's, so the command line wins: one "name value" or "name = value" per
// line, '#' comments, a name alone sets a switch. No such flag in argv: 0 with *oargv NULL.
// Otherwise *oargv (*oargc entries) and *mem are malloc'ed, for the caller to free.
// -EINVAL, -ENOMEM with err naming the file and line.
int flags_config_argv(const char *flag, int argc, char **argv, int *oargc, char ***oargv, char **mem, char *err,
		      size_t errlen);

// A tool's command line: its name (for messages), the synopsis --help prints above the flag
// lines (ending in a newline), and its table (with a "help" switch).
typedef struct {
	const char *name, *synopsis;
	const FlagSpec *table;
	int n;
} FlagTool;
// flags_parse into cfg (rest as there); a bad flag ends the process with flags_parse's sentence
// (log_fatalx); the table's "help" switch set: the usage on stdout and exit 0
void flags_tool(const FlagTool *t, void *cfg, int argc, char **argv, FlagRest *rest);
// the synopsis, an empty line, then the flag lines
void flags_tool_usage(const FlagTool *t, FILE *f);

#endif
