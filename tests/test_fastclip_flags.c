// The FastCLIP flag table: values set from strings land in the config, bad names, values and
// out-of-bounds numbers are refused, and help / describe name every flag.
#include <errno.h>  // defines: EINVAL, ENOENT, ERANGE
#include <stdio.h>  // defines: printf
#include <string.h> // defines: strstr, memset, memcmp

#include "fastclip.h" // defines: fastclip_flag_set, fastclip_flags_help, fastclip_config_describe

static int fails;
#define EXPECT(cond)                                                                                                   \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			printf("FAIL line %d: %s\n", __LINE__, #cond);                                                 \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

int main(void)
{
	FastclipConfig c;
	fastclip_config_default(&c, FASTCLIP_V2);
	EXPECT(c.tau_init == 0.03 && c.lr_tau == 0.0133 && c.rho == 8.0 && c.gamma_min == 0.8);
	EXPECT(fastclip_flag_set(&c, "gamma-min", "0.2") == 0 && c.gamma_min == 0.2);
	EXPECT(fastclip_flag_set(&c, "gamma-decay-epochs", "18") == 0 && c.gamma_decay_epochs == 18);
	EXPECT(fastclip_flag_set(&c, "gamma-schedule", "constant") == 0 && c.gamma_schedule == FASTCLIP_GAMMA_CONSTANT);
	EXPECT(fastclip_flag_set(&c, "rho", "6.5") == 0 && c.rho == 6.5);
	EXPECT(fastclip_flag_set(&c, "lr-tau", "2e-4") == 0 && c.lr_tau == 2e-4);
	EXPECT(fastclip_flag_set(&c, "gamma-min", "1.5") == -ERANGE && c.gamma_min == 0.2);
	EXPECT(fastclip_flag_set(&c, "gamma-min", "abc") == -EINVAL);
	EXPECT(fastclip_flag_set(&c, "gamma-min", "0.3x") == -EINVAL);
	EXPECT(fastclip_flag_set(&c, "gamma-decay-epochs", "2.5") == -EINVAL);
	EXPECT(fastclip_flag_set(&c, "gamma-schedule", "linear") == -EINVAL);
	EXPECT(fastclip_flag_set(&c, "rho", "nan") == -EINVAL);
	EXPECT(fastclip_flag_set(&c, "gama-min", "0.3") == -ENOENT);
	EXPECT(fastclip_config_check(&c) == 0);
	char buf[2048];
	EXPECT(fastclip_config_describe(&c, buf, sizeof(buf)) > 0);
	EXPECT(strstr(buf, "loss=fastclip-v2") && strstr(buf, "gamma-min=0.2") &&
	       strstr(buf, "gamma-schedule=constant") && strstr(buf, "rho=6.5"));
	printf("%s\n", buf);
	EXPECT(fastclip_flags_help(buf, sizeof(buf)) > 0);
	EXPECT(strstr(buf, "--gamma-decay-epochs") && strstr(buf, "--tau-eps") && strstr(buf, "(default 0.8)"));
	// the defaults --help shows are fastclip_config_default's for fastclip-v3
	FastclipConfig shown, v3;
	int n;
	const FlagSpec *t = fastclip_flag_table(&n);
	memset(&shown, 0, sizeof shown);
	fastclip_config_default(&v3, FASTCLIP_V3);
	EXPECT(flags_defaults(t, n, &shown, buf, sizeof buf) == 0);
	for (int i = 0; i < n; i++)
		if (memcmp((char *)&shown + t[i].off, (char *)&v3 + t[i].off, t[i].size)) {
			printf("FAIL: --%s: the default in the table is not fastclip-v3's\n", t[i].name);
			fails++;
		}
	printf(fails ? "FAIL: %d flag checks\n" : "flag table works\n", fails);
	return fails ? 1 : 0;
}
