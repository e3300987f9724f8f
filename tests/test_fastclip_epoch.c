// An epoch as FastCLIP counts it: --train-num-samples N gives ceil(N / (B·K)) steps per epoch,
// separate from --dataset-size (the rows of the u tables), which is its default.
#include <stdio.h>

#include "fastclip.h"      // defines: fastclip_steps_per_epoch
#include "trainer_flags.h" // defines: trainer_flags_parse

int main(void)
{
	int bad = 0;
	bad |= fastclip_steps_per_epoch(1000, 64) != 16; // 15.6 -> 16
	bad |= fastclip_steps_per_epoch(1024, 64) != 16;
	bad |= fastclip_steps_per_epoch(1, 64) != 1;
	bad |= fastclip_steps_per_epoch(0, 64) != 0;
	char err[256];
	TrainerConfig c;
	char *a1[] = {"trainer", "--run-dir", "/tmp/x", "--dataset-size", "5000", "--batch-size", "8"};
	if (trainer_flags_parse(&c, 7, a1, err, sizeof err) < 0 || c.train_num_samples != 5000 ||
	    c.dataset_size != 5000) {
		printf("FAIL default --train-num-samples: %lld (%s)\n", (long long)c.train_num_samples, err);
		bad = 1;
	}
	char *a2[] = {"trainer", "--run-dir", "/tmp/x", "--dataset-size", "5000", "--train-num-samples", "1200"};
	if (trainer_flags_parse(&c, 7, a2, err, sizeof err) < 0 || c.train_num_samples != 1200 ||
	    c.dataset_size != 5000 || fastclip_steps_per_epoch(c.train_num_samples, 8 * 2) != 75) {
		printf("FAIL --train-num-samples 1200: %lld, dataset %lld (%s)\n", (long long)c.train_num_samples,
		       (long long)c.dataset_size, err);
		bad = 1;
	}
	printf("%s\n", bad ? "FAIL epoch length" : "PASS an epoch is ceil(train-num-samples / global batch) steps");
	return bad;
}
