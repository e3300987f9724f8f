// The optimizer's flag table (optim_flag_table) over OptConfig: its defaults are
// optim_config_default's, each flag reaches its field, and the log line names them.
#include <stdio.h>
#include <string.h>

#include "flags.h" // defines: flags_defaults, flags_find, flags_set
#include "model.h" // defines: OptConfig, optim_config_default, optim_flag_table, optim_config_describe

static int bad;

static void expect(const char *what, int ok)
{
	printf("%-4s %s\n", ok ? "ok" : "FAIL", what);
	bad |= !ok;
}

int main(void)
{
	int n;
	const FlagSpec *t = optim_flag_table(&n);
	OptConfig a, b;
	char err[200];
	optim_config_default(&a);
	memset(&b, 0, sizeof b);
	b.total_steps = a.total_steps; // the schedule's length is not a flag of the table
	expect("the table's defaults parse", flags_defaults(t, n, &b, err, sizeof err) == 0);
	expect("... and equal optim_config_default's",
	       a.kind == b.kind && a.lr == b.lr && a.lr_min == b.lr_min && a.warmup_steps == b.warmup_steps &&
		       a.beta1 == b.beta1 && a.beta2 == b.beta2 && a.eps == b.eps && a.weight_decay == b.weight_decay &&
		       a.clip_norm == b.clip_norm);
	expect("--optimizer lamb",
	       flags_set(flags_find(t, n, "optimizer"), &b, "lamb", err, sizeof err) == 0 && b.kind == OPT_LAMB);
	expect("--adam-eps 1e-8 is eps",
	       flags_set(flags_find(t, n, "adam-eps"), &b, "1e-8", err, sizeof err) == 0 && b.eps == 1e-8);
	expect("--beta2 1 is refused (β < 1)", flags_set(flags_find(t, n, "beta2"), &b, "1", err, sizeof err) < 0);
	char line[512];
	optim_config_describe(&b, line, sizeof line);
	printf("     %s\n", line);
	expect("the log line names the optimizer and its rate",
	       strstr(line, "optimizer=lamb") && strstr(line, "lr=0.0005") && strstr(line, "adam-eps=1e-08"));
	printf("%s\n", bad ? "FAIL optimizer flags" : "PASS optimizer flags over OptConfig");
	return bad;
}
