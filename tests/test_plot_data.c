// tools/plot's JSON-lines reading: numbers, null and absent keys (a key that prefixes another is
// not confused with it), half-written lines counted and skipped, eval-only lines dropped from
// the step curves, and steps written again after a resume replacing the earlier ones.
#include "../tools/plot_data.h" // defines: PlotTable, plot_json_number, plot_table_read, ...
#include "testutil.h"           // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h> // defines: EINVAL, ENOENT, ...
#include <math.h>  // defines: fabs, isnan, log2

int main(void)
{
	double v;
	const char *line = "{\"step\":12,\"step_s\":0.5,\"loss\":null,\"tau\":7e-2,\"slots\":{\"ready\":3}}";
	CHECK_EQ_INT(plot_json_number(line, "step", &v), 1);
	CHECK(v == 12);
	CHECK_EQ_INT(plot_json_number(line, "step_s", &v), 1);
	CHECK(v == 0.5);
	CHECK_EQ_INT(plot_json_number(line, "tau", &v), 1);
	CHECK(fabs(v - 0.07) < 1e-12);
	CHECK_EQ_INT(plot_json_number(line, "loss", &v), 0);
	CHECK(isnan(v));
	CHECK_EQ_INT(plot_json_number(line, "ready", &v), 1); // nested keys are found too (documented)
	CHECK_EQ_INT(plot_json_number(line, "lr", &v), -1);
	// keys are JSON tokens: text inside a string value is not a key (strstr found "lr": in it)
	const char *quoted = "{\"note\":\"set \\\"lr\\\": 3\",\"lr\":null,\"step\":4}";
	CHECK_EQ_INT(plot_json_number(quoted, "lr", &v), 0);
	CHECK(isnan(v));
	CHECK_EQ_INT(plot_json_number(quoted, "step", &v), 1);
	CHECK(v == 4);

	char path[] = "/tmp/test_plot_data_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	FILE *f = fdopen(fd, "w");
	CHECK(f);
	fputs("{\"step\":1,\"loss\":5}\n{\"step\":2,\"loss\":4}\n{\"step\":3,\"loss\":3}\n"
	      "{\"step\":3,\"t2v_r1\":0.5}\n" // an eval-only line
	      "{\"step\":4,\"loss\":2}\n"
	      "{\"epoch\":1,\"loss\":9}\n"  // no x: skipped
	      "{\"step\":3,\"loss\":2.5}\n" // resumed from step 2
	      "{\"step\":4,\"loss\":2.25}\n"
	      "{\"step\":5,\"loss\":2.0",
	      f); // half-written
	CHECK(!fclose(f));
	const char *keys[] = {"step", "loss"};
	PlotTable t;
	char err[256];
	CHECK_OK(plot_table_read(path, keys, 2, &t, err, sizeof err));
	CHECK_EQ_INT(t.n, 7);
	CHECK_EQ_INT(t.bad_lines, 1);
	plot_table_keep_finite(&t, 1, 1);
	CHECK_EQ_INT(t.n, 6);
	plot_table_latest(&t);
	const double steps[] = {1, 2, 3, 4}, loss[] = {5, 4, 2.5, 2.25};
	CHECK_EQ_INT(t.n, 4);
	for (int i = 0; i < 4; i++)
		CHECK(t.col[0][i] == steps[i] && t.col[1][i] == loss[i]);
	CHECK(plot_table_has(&t, 1));
	plot_table_free(&t);
	remove(path);
	CHECK_EQ_INT(plot_table_read(path, keys, 2, &t, err, sizeof err), -ENOENT);
	CHECK(strstr(err, "No such file"));
	printf("plot data: numbers, null, absent, bad lines, eval-only lines, resumed steps\n");
	return 0;
}
