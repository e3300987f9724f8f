// Bad inputs to the FastCLIP API get -EINVAL / -ERANGE, never a crash: unknown loss names,
// out-of-domain hyper-parameters, sample ids outside the tables, a global batch of one.
#include <errno.h> // defines: EINVAL, ERANGE
#include <math.h>  // defines: NAN
#include <stdio.h> // defines: printf

#include "fastclip_ref.h" // defines: fastclip_local, fastclip_surrogate, fastclip_openclip, fastclip_temp_init, fastclip_temp_step

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
	FastclipKind k;
	EXPECT(fastclip_kind_parse("fastclip-v3", &k) == 0 && k == FASTCLIP_V3);
	EXPECT(fastclip_kind_parse("openclip", &k) == 0 && k == FASTCLIP_OPENCLIP);
	EXPECT(fastclip_kind_parse("fastclip-v4", &k) == -EINVAL);
	EXPECT(fastclip_kind_parse(NULL, &k) == -EINVAL);

	FastclipConfig cfg;
	fastclip_config_default(&cfg, FASTCLIP_V1);
	EXPECT(fastclip_config_check(&cfg) == 0);
	cfg.gamma_min = 0.0;
	EXPECT(fastclip_config_check(&cfg) == -EINVAL);
	cfg.gamma_min = 1.5;
	EXPECT(fastclip_config_check(&cfg) == -EINVAL);
	fastclip_config_default(&cfg, FASTCLIP_V1);
	cfg.gamma_decay_epochs = 0;
	EXPECT(fastclip_config_check(&cfg) == -EINVAL);
	fastclip_config_default(&cfg, FASTCLIP_V1);
	cfg.rho = NAN;
	EXPECT(fastclip_config_check(&cfg) == -EINVAL);
	fastclip_config_default(&cfg, FASTCLIP_V2);
	cfg.tau_min = 2.0;
	EXPECT(fastclip_config_check(&cfg) == -EINVAL);

	FastclipTables t;
	fastclip_config_default(&cfg, FASTCLIP_V1);
	EXPECT(fastclip_tables_create(&t, &cfg, 0) == -EINVAL);
	EXPECT(fastclip_tables_create(&t, &cfg, 8) == 0);
	int64_t bad_id[1] = {8};
	float pack[2] = {1, 1};
	EXPECT(fastclip_tables_scatter(&t, 1, bad_id, pack) == -ERANGE);

	float e[2 * 2] = {1, 0, 0, 1};
	int64_t ids[2] = {0, 9};
	float out[2 * 2], de1[4], de2[4];
	FastclipBatch b = {
		.B = 2, .K = 1, .rank = 0, .d = 2, .e1 = e, .e2 = e, .E1 = e, .E2 = e, .ids = ids, .log_s = 1.0};
	EXPECT(fastclip_local(&cfg, &t, 0, &b, out) == -ERANGE); // id 9 outside an 8-sample table
	ids[1] = 1;
	EXPECT(fastclip_local(&cfg, &t, 0, &b, out) == 0);
	EXPECT(fastclip_local(&cfg, &t, -1, &b, out) == -EINVAL);
	b.rank = 1;
	EXPECT(fastclip_local(&cfg, &t, 0, &b, out) == -EINVAL); // rank outside K
	b.rank = 0;
	b.B = 1; // a global batch of one sample has no negatives
	EXPECT(fastclip_local(&cfg, &t, 0, &b, out) == -EINVAL);
	FastclipGrads g = {.de1 = de1, .de2 = de2};
	EXPECT(fastclip_surrogate(&cfg, &b, out, out, &g) == -EINVAL);
	b.B = 2;
	g.de2 = NULL;
	EXPECT(fastclip_surrogate(&cfg, &b, out, out, &g) == -EINVAL);
	FastclipConfig oc;
	fastclip_config_default(&oc, FASTCLIP_OPENCLIP);
	EXPECT(fastclip_local(&oc, &t, 0, &b, out) == -EINVAL); // kind differs from the tables'
	double l, dls;
	EXPECT(fastclip_openclip(&b, &l, NULL, de2, &dls) == -EINVAL);
	fastclip_tables_free(&t);

	FastclipTemp tp;
	EXPECT(fastclip_temp_init(&tp, 0.0) == -EINVAL);
	EXPECT(fastclip_temp_init(&tp, 0.07) == 0);
	EXPECT(fastclip_temp_step(&tp, NAN, 1e-3, 0.9, 0.98, 1e-6) == -EINVAL);
	EXPECT(fastclip_temp_step(&tp, 1.0, 1e-3, 1.0, 0.98, 1e-6) == -EINVAL);
	EXPECT(fastclip_temp_step(&tp, -1e6, 100.0, 0.9, 0.98, 1e-6) == 0 && tp.log_s <= FASTCLIP_LOG_S_MAX);
	printf(fails ? "FAIL: %d bad inputs not rejected\n" : "all bad inputs rejected\n", fails);
	return fails ? 1 : 0;
}
