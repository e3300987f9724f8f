// The trainer's command line is read in two passes (its own table, then the model's, FastCLIP's
// and the optimizer's): a switch of any table, or --no-NAME of one, takes no value, so the flag
// after it is read, never swallowed as its value ("--no-flip --image-size 48" once built a 32-px model).
#include <stdio.h>
#include <string.h>

#include "trainer_flags.h" // defines: TrainerConfig, trainer_flags_parse

static int fails;

// parses "trainer --run-dir /tmp/x --dataset-size 100" + the words of extra (at most 8)
static int parse(TrainerConfig *c, const char *extra, char *err, size_t errlen)
{
	char buf[256], *argv[16] = {"trainer", "--run-dir", "/tmp/x", "--dataset-size", "100"};
	int argc = 5;
	snprintf(buf, sizeof buf, "%s", extra);
	for (char *w = strtok(buf, " "); w && argc < 15; w = strtok(NULL, " "))
		argv[argc++] = w;
	return trainer_flags_parse(c, argc, argv, err, errlen);
}

#define CHECK(extra, cond)                                                                                             \
	do {                                                                                                           \
		TrainerConfig c;                                                                                       \
		char err[300] = "";                                                                                    \
		if (parse(&c, extra, err, sizeof err) < 0 || !(cond)) {                                                \
			printf("FAIL \"%s\": want %s (%s)\n", extra, #cond, err);                                      \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

int main(void)
{
	// the trainer's own switch, negated, before a model, a FastCLIP and an optimizer flag
	CHECK("--no-flip --image-size 48", !c.flip && c.model.image_size == 48);
	CHECK("--no-flip --rho 6.5", !c.flip && c.loss.rho == 6.5);
	CHECK("--no-flip --lr 0.003 --frames 1", !c.flip && c.opt.lr == 0.003 && c.model.frames == 1);
	CHECK("--grad-checkpoint --image-size 48", c.grad_checkpoint && c.model.image_size == 48);
	// FastCLIP's switch (another table) before a flag of each table, and negated
	CHECK("--fastclip-upstream-reset --image-size 48", c.loss.upstream_reset && c.model.image_size == 48);
	CHECK("--fastclip-upstream-reset --batch-size 4", c.loss.upstream_reset && c.batch_size == 4);
	CHECK("--fastclip-upstream-reset --no-fastclip-upstream-reset --rho 3",
	      !c.loss.upstream_reset && c.loss.rho == 3);
	CHECK("--image-size 48 --no-flip", !c.flip && c.model.image_size == 48);
	CHECK("--flip", c.flip);
	TrainerConfig c;
	char err[300];
	if (parse(&c, "--no-fastclip-upstream-reset=1", err, sizeof err) == 0 || !strstr(err, "takes no value")) {
		printf("FAIL --no-fastclip-upstream-reset=1 accepted or not named: %s\n", err);
		fails++;
	}
	printf("%s\n", fails ? "FAIL" : "PASS switches of every table take no value; the next flag is read");
	return fails ? 1 : 0;
}
