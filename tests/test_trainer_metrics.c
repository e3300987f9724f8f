// Metrics file: one JSON object per step, and reopening for a resumed run cuts the lines a
// crashed run wrote after its last checkpoint, so no step appears twice.
#include <stdio.h>  // defines: printf, fopen, fgets
#include <stdlib.h> // defines: mkdtemp
#include <string.h> // defines: strstr

#include "trainer_metrics.h" // defines: trainer_metrics_open, trainer_metrics_write

static int steps_in(const char *path, long long *out, int max)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	int n = 0;
	while (f && fgets(line, sizeof line, f) && n < max)
		if (sscanf(line, "{\"step\":%lld", &out[n]) == 1 && strstr(line, "\"tau\":0.07") && strchr(line, '}'))
			n++;
		else
			out[n++] = -1;
	if (f)
		fclose(f);
	return n;
}

int main(void)
{
	char dir[] = "/tmp/test_trainer_metrics.XXXXXX", path[64];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
	TrainerMetrics m = {.tau = 0.07, .loss = 1.0 / 0.0};
	int fail = 0;
	FILE *f = trainer_metrics_open(path, -1);
	for (m.step = 1; f && m.step <= 5; m.step++)
		fail |= trainer_metrics_write(f, &m) < 0;
	if (f)
		fclose(f);
	f = trainer_metrics_open(path, 3); // resumed from the checkpoint of step 3
	for (m.step = 4; f && m.step <= 6; m.step++)
		fail |= trainer_metrics_write(f, &m) < 0;
	if (f)
		fclose(f);
	long long got[16];
	int n = steps_in(path, got, 16);
	for (int i = 0; i < 6; i++)
		if (n != 6 || got[i] != i + 1)
			fail = 1;
	if (!f || fail) {
		printf("FAIL: want steps 1..6 once each, got %d lines:", n);
		for (int i = 0; i < n; i++)
			printf(" %lld", got[i]);
		printf("\n");
	} else {
		printf("steps 1..5, resume at 3, steps 4..6: the file holds 1..6 once each\n");
	}
	remove(path);
	remove(dir);
	return fail;
}
