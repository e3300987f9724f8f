// The flag engine: every type, both --name value and --name=value, aliases, --no-switch,
// defaults through the parser, the error sentences, positional arguments, --help, config files.
#include <stdint.h> // defines: int64_t, uint64_t
#include <stdio.h>  // defines: printf, fopen
#include <stdlib.h> // defines: free
#include <string.h> // defines: strstr, strcmp

#include "flags.h" // defines: FlagSpec, FlagTable, flags_parse, flags_check_known, flags_renamed_used, flags_help, ...

typedef struct {
	int on, mode, n, act;
	int64_t big;
	uint64_t seed;
	double lr;
	char name[8], io[8];
	const char *path;
} Cfg;

static const FlagSpec table[] = {
	{"on", FLAG_SWITCH, FLAG_AT(Cfg, on), 0, 0, "1", .help = "a switch on by default"},
	{"train", FLAG_SET, FLAG_AT(Cfg, mode), 1, 0, NULL, .help = "mode 1"},
	{"eval", FLAG_SET, FLAG_AT(Cfg, mode), 2, 0, NULL, .help = "mode 2"},
	{"batch-size", FLAG_INT, FLAG_AT(Cfg, n), 1, 64, "8", .help = "samples per step", .alias = 'b'},
	{"big", FLAG_I64, FLAG_AT(Cfg, big), -1, 1e15, "-1", .help = "a 64-bit count"},
	{"seed", FLAG_U64, FLAG_AT(Cfg, seed), 0, 0, "0", .help = "a seed"},
	{"lr", FLAG_DOUBLE, FLAG_AT(Cfg, lr), 0, 10, "5e-4", .help = "learning rate"},
	{"name", FLAG_STRING, FLAG_AT(Cfg, name), 0, 0, "avclip", .help = "a name of up to seven characters"},
	{"io", FLAG_CHOICE, FLAG_AT(Cfg, io), 0, 0, "auto", .help = "how to read", .choices = "auto|pread"},
	{"path", FLAG_STRPTR, FLAG_AT(Cfg, path), 0, 0, NULL, .help = "a path"},
	{"act", FLAG_ENUM, FLAG_AT(Cfg, act), 0, 0, "gelu", .help = "an enum", .choices = "gelu|quickgelu"},
};
enum { N = sizeof table / sizeof table[0] };

static int fails;
#define CHECK(c, ...)                                                                                                  \
	do {                                                                                                           \
		if (!(c)) {                                                                                            \
			printf("FAIL line %d: ", __LINE__);                                                            \
			printf(__VA_ARGS__);                                                                           \
			printf("\n");                                                                                  \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

static int parse(Cfg *c, char *err, FlagRest *rest, int argc, char **argv)
{
	memset(c, 0, sizeof *c);
	err[0] = 0;
	return flags_parse(table, N, c, argc, argv, rest, err, 256);
}

// argv must refuse with err containing want
static void refused(const char *want, int argc, char **argv)
{
	Cfg c;
	char err[256];
	int rc = parse(&c, err, NULL, argc, argv);
	CHECK(rc < 0 && strstr(err, want), "%s ...: rc %d err '%s', want '%s'", argv[1], rc, err, want);
}

static void values(void)
{
	Cfg c;
	char err[256];
	char *d[] = {"p"};
	CHECK(parse(&c, err, NULL, 1, d) == 0, "defaults: %s", err);
	CHECK(c.on == 1 && c.n == 8 && c.big == -1 && c.lr == 5e-4 && !strcmp(c.name, "avclip") &&
		      !strcmp(c.io, "auto") && c.path == NULL && c.mode == 0,
	      "defaults not set");
	char *a[] = {"p",         "--batch-size", "16",    "--big=123456789012", "--seed", "18446744073709551615",
		     "--lr=0.25", "--name",       "x=y",   "--io=pread",         "--path", "/a b",
		     "--eval",    "--no-on",      "--act", "quickgelu"};
	CHECK(parse(&c, err, NULL, 16, a) == 0 && c.act == 1, "values: %s", err);
	CHECK(c.n == 16 && c.big == 123456789012LL && c.seed == UINT64_MAX && c.lr == 0.25 && !strcmp(c.name, "x=y") &&
		      !strcmp(c.io, "pread") && !strcmp(c.path, "/a b") && c.mode == 2 && c.on == 0,
	      "values not set (n %d big %lld seed %llu)", c.n, (long long)c.big, (unsigned long long)c.seed);
	char *b[] = {"p", "-b", "3", "--on=0", "--train", "--on"};
	CHECK(parse(&c, err, NULL, 6, b) == 0 && c.n == 3 && c.on == 1 && c.mode == 1, "alias/switch: %s", err);
	char *b2[] = {"p", "-b4", "--on=false"};
	CHECK(parse(&c, err, NULL, 3, b2) == 0 && c.n == 4 && c.on == 0, "-b4: %s", err);
	char *neg[] = {"p", "--big", "-1"}; // a negative number is a value, not a flag
	CHECK(parse(&c, err, NULL, 3, neg) == 0 && c.big == -1, "--big -1: %s", err);
}

static void errors(void)
{
	refused("--batch-size wants an integer, got 'abc'", 3, (char *[]){"p", "--batch-size", "abc", NULL});
	refused("--batch-size wants an integer, got '2.5'", 2, (char *[]){"p", "--batch-size=2.5", NULL});
	refused("--batch-size 65 is outside [1, 64]", 3, (char *[]){"p", "--batch-size", "65", NULL});
	refused("--batch-size wants an integer, got '99999999999'", 3,
		(char *[]){"p", "--batch-size", "99999999999", NULL});
	refused("--seed wants a non-negative integer, got '-1'", 3, (char *[]){"p", "--seed", "-1", NULL});
	refused("--lr wants a number, got 'nan'", 3, (char *[]){"p", "--lr", "nan", NULL});
	refused("--lr 11 is outside [0, 10]", 3, (char *[]){"p", "--lr", "11", NULL});
	refused("--io 'uring' is not one of auto, pread", 3, (char *[]){"p", "--io", "uring", NULL});
	refused("--act 'relu' is not one of gelu, quickgelu", 3, (char *[]){"p", "--act", "relu", NULL});
	refused("--name: value longer than 7 characters", 3, (char *[]){"p", "--name", "12345678", NULL});
	refused("--lr needs a value", 2, (char *[]){"p", "--lr", NULL});
	refused("unknown flag --batchsize (did you mean --batch-size?)", 3, (char *[]){"p", "--batchsize", "3", NULL});
	refused("unknown flag --frobnicate (see --help)", 2, (char *[]){"p", "--frobnicate", NULL});
	refused("--on is a switch", 2, (char *[]){"p", "--on=maybe", NULL});
	refused("--eval takes no value", 2, (char *[]){"p", "--eval=1", NULL});
	refused("unexpected argument 'stray'", 2, (char *[]){"p", "stray", NULL});
}

static void rest(void)
{
	Cfg c;
	char err[256];
	const char *pos[2];
	FlagRest r = {.pos = pos, .max_pos = 2, .keep_unknown = 1};
	char *a[] = {"p", "one", "--model-width", "64", "--batch-size", "2", "--", "--two"};
	CHECK(parse(&c, err, &r, 8, a) == 0, "rest: %s", err);
	CHECK(r.n_pos == 2 && !strcmp(pos[0], "one") && !strcmp(pos[1], "--two") && r.n_unknown == 1 && c.n == 2,
	      "rest: %d positional, %d unknown", r.n_pos, r.n_unknown);
	char *b[] = {"p", "1", "2", "3"};
	CHECK(parse(&c, err, &r, 4, b) < 0 && strstr(err, "unexpected argument '3'"), "third positional: %s", err);
	// a later pass's switch (in also) takes no value here: the flag after it is read
	static const FlagSpec later[] = {{"upstream", FLAG_SWITCH, FLAG_AT(Cfg, act), 0, 0, "0", .help = "a switch"}};
	const FlagTable also = {later, 1};
	FlagRest r2 = {.keep_unknown = 1, .also = &also, .n_also = 1};
	char *d[] = {"p", "--upstream", "--batch-size", "3", "--no-upstream", "--lr", "0.5"};
	CHECK(parse(&c, err, &r2, 7, d) == 0 && c.n == 3 && c.lr == 0.5 && r2.n_unknown == 2,
	      "a later table's switch: %s, batch %d, lr %g, %d unknown", err, c.n, c.lr, r2.n_unknown);
	// the second pass splits --no-NAME of a switch without a value, in one table or several
	const char *v;
	char name[64], *e[] = {"p", "--no-on", "--lr", "0.5"};
	int i = 1;
	CHECK(flags_split(table, N, 4, e, &i, name, sizeof name, &v, err, sizeof err) == 0 && i == 1 && !v &&
		      !strcmp(name, "no-on"),
	      "--no-on split: i %d, value %s", i, v ? v : "none");
	const FlagTable both[] = {{table, N}, {later, 1}};
	char *f[] = {"p", "--no-upstream", "--lr", "0.5"};
	i = 1;
	CHECK(flags_split_in(both, 2, 4, f, &i, name, sizeof name, &v, err, sizeof err) == 0 && i == 1 && !v,
	      "--no-upstream split over two tables: i %d", i);
}

static void text(void)
{
	char help[4096];
	int n = flags_help(table, N, help, sizeof help);
	CHECK(n > 0 && n == (int)strlen(help), "help length %d", n);
	CHECK(strstr(help, "  -b, --batch-size INT  samples per step [1, 64] (default 8)\n") != NULL,
	      "batch-size line:\n%s", help);
	CHECK(strstr(help, "  --io auto|pread       how to read (default auto)\n") != NULL, "io line:\n%s", help);
	CHECK(strstr(help, "  --act gelu|quickgelu  an enum (default gelu)\n") != NULL, "enum line:\n%s", help);
	CHECK(strstr(help, "  --on                  a switch on by default (default on)\n") != NULL, "switch line:\n%s",
	      help);
	CHECK(strstr(help, "  --lr NUM              learning rate [0, 10] (default 5e-4)\n") != NULL, "lr line:\n%s",
	      help);
	char small[16];
	CHECK(flags_help(table, N, small, sizeof small) == n && strlen(small) == 15, "help truncation");
	Cfg c;
	char err[256], line[512];
	char *a[] = {"p", "--eval", "--path", "x"};
	parse(&c, err, NULL, 4, a);
	flags_describe(table, N, &c, line, sizeof line);
	CHECK(!strcmp(line, "on=1 eval batch-size=8 big=-1 seed=0 lr=0.0005 name=avclip io=auto path=x act=gelu"),
	      "describe: %s", line);
}

static void config_file(void)
{
	const char *path = "test_flags.conf";
	FILE *f = fopen(path, "w");
	fprintf(f, "# a comment\nbatch-size 5\n  lr = 0.5  # trailing\n\non\nname short\n");
	fclose(f);
	char *a[] = {"p", "--conf", (char *)path, "--batch-size=6"};
	int ac;
	char **av, *mem, err[256] = "";
	CHECK(flags_config_argv("conf", 4, a, &ac, &av, &mem, err, sizeof err) == 0 && av, "config: %s", err);
	if (av) {
		Cfg c;
		FlagSpec t[N + 1];
		memcpy(t, table, sizeof table);
		t[N] = (FlagSpec){"conf", FLAG_STRPTR, FLAG_AT(Cfg, path), 0, 0, NULL, .help = "config file"};
		memset(&c, 0, sizeof c);
		CHECK(flags_parse(t, N + 1, &c, ac, av, NULL, err, sizeof err) == 0, "config parse: %s", err);
		CHECK(c.n == 6 && c.lr == 0.5 && c.on == 1 && !strcmp(c.name, "short"), "config values: n %d lr %g",
		      c.n, c.lr);
		free(av);
		free(mem);
	}
	f = fopen(path, "w");
	fprintf(f, "lr 1\n= 3\n");
	fclose(f);
	CHECK(flags_config_argv("conf", 4, a, &ac, &av, &mem, err, sizeof err) < 0 && strstr(err, "line 2"),
	      "bad line: %s", err);
	char *none[] = {"p", "--lr", "1"};
	CHECK(flags_config_argv("conf", 3, none, &ac, &av, &mem, err, sizeof err) == 0 && !av, "no config flag");
	char *missing[] = {"p", "--conf=/nonexistent/x"};
	CHECK(flags_config_argv("conf", 2, missing, &ac, &av, &mem, err, sizeof err) < 0 &&
		      strstr(err, "/nonexistent/x"),
	      "missing file: %s", err);
	remove(path);
}

// several tables (a program's own and the model's): a misspelt flag of either is named with the
// nearest name over both, values of known flags are skipped, --no-SWITCH and -- are understood
static void known(void)
{
	static const FlagSpec model[] = {
		{"vis-width", FLAG_INT, FLAG_AT(Cfg, n), 1, 64, NULL, .help = "width"},
	};
	const FlagTable tabs[] = {{table, N}, {model, 1}};
	char err[256];
	char *ok[] = {"p", "--vis-width", "8", "--path", "--not-a-flag", "--no-on", "-b", "4", "--", "--zz"};
	CHECK(flags_check_known(tabs, 2, 10, ok, err, sizeof err) == 0, "known flags refused: %s", err);
	char *typo[] = {"p", "--path", "x", "--vis-widht", "3"};
	CHECK(flags_check_known(tabs, 2, 5, typo, err, sizeof err) < 0 &&
		      strstr(err, "unknown flag --vis-widht (did you mean --vis-width?)"),
	      "second table's typo: %s", err);
	char *far[] = {"p", "--zzzzzz=1"};
	CHECK(flags_check_known(tabs, 2, 2, far, err, sizeof err) < 0 &&
		      strstr(err, "unknown flag --zzzzzz (see --help)"),
	      "far typo: %s", err);
}

// a program's second pass (the trainer's model sizes) splits argv with the first table: --no-SWITCH
// takes no value, so the flag after it is split on its own and not swallowed as a value
static void split_negated(void)
{
	char *argv[] = {"p", "--no-on", "--vis-width", "8"};
	char name[64], err[256];
	const char *v = "unset";
	int i = 1;
	CHECK(flags_split(table, N, 4, argv, &i, name, sizeof name, &v, err, sizeof err) == 0 && i == 1 && !v &&
		      !strcmp(name, "no-on"),
	      "--no-on split as '%s' = '%s', next %d", name, v ? v : "(none)", i + 1);
	i = 2;
	CHECK(flags_split(table, N, 4, argv, &i, name, sizeof name, &v, err, sizeof err) == 0 && i == 3 && v &&
		      !strcmp(name, "vis-width") && !strcmp(v, "8"),
	      "the flag after --no-on: '%s' = '%s'", name, v ? v : "(none)");
	char *notsw[] = {"p", "--no-lr", "3"}; // not a switch: an unknown flag, which takes a value
	i = 1;
	CHECK(flags_split(table, N, 3, notsw, &i, name, sizeof name, &v, err, sizeof err) == 0 && i == 2 && v &&
		      !strcmp(v, "3"),
	      "--no-lr: '%s' = '%s'", name, v ? v : "(none)");
}

// an old name of a flag sets the same field, is left out of --help, and is reported
static void renamed(void)
{
	typedef struct {
		int workers;
	} W;
	static const FlagSpec t[] = {
		{"workers", FLAG_INT, FLAG_AT(W, workers), 1, 8, "1", .help = "decode workers"},
		{"threads", FLAG_INT, FLAG_AT(W, workers), 1, 8, NULL, .renamed = "workers"},
	};
	W w;
	char err[256], msg[200], help[1024];
	char *old[] = {"p", "--threads", "3"};
	CHECK(flags_parse(t, 2, &w, 3, old, NULL, err, sizeof err) == 0 && w.workers == 3, "old name: %s", err);
	CHECK(flags_renamed_used(t, 2, 3, old, msg, sizeof msg) == 1 &&
		      strstr(msg, "--threads is now called --workers"),
	      "no note for the old name: %s", msg);
	char *now[] = {"p", "--workers", "2"};
	CHECK(flags_renamed_used(t, 2, 3, now, msg, sizeof msg) == 0, "note for the new name");
	flags_help(t, 2, help, sizeof help);
	CHECK(strstr(help, "--workers") && !strstr(help, "--threads"), "help lists the old name: %s", help);
	char *typo[] = {"p", "--thread", "3"};
	CHECK(flags_parse(t, 2, &w, 3, typo, NULL, err, sizeof err) < 0 && strstr(err, "did you mean --workers?"),
	      "a typo of the old name suggests the new one: %s", err);
}

int main(void)
{
	known();
	split_negated();
	renamed();
	values();
	errors();
	rest();
	text();
	config_file();
	if (fails)
		return 1;
	printf("flags: every type, = form, aliases, errors, positionals, help, describe, config files, unknown flags over "
	       "several tables and old names ok\n");
	return 0;
}
