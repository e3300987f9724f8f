// Slurm's compressed host lists and tasks-per-node strings, read without scontrol: expansion in
// Slurm's order with zero padding, and every malformed form refused.
#include <errno.h>

#include "test_rdv_util.h" // defines: rdv_hostlist_nth, CHECK

static void hosts(const char *list, long count, const char *const *want)
{
	char out[64];
	long n = rdv_hostlist_count(list);
	if (n != count) {
		fprintf(stderr, "'%s': %ld hosts, want %ld\n", list, n, count);
		exit(1);
	}
	for (long k = 0; k < count; k++) {
		int rc = rdv_hostlist_nth(list, k, out, sizeof out);
		if (rc || strcmp(out, want[k])) {
			fprintf(stderr, "'%s' host %ld: rc %d '%s', want '%s'\n", list, k, rc, rc ? "" : out, want[k]);
			exit(1);
		}
	}
	CHECK_EQ_INT(rdv_hostlist_nth(list, count, out, sizeof out), -ERANGE);
}

#define H(...) ((const char *const[]){__VA_ARGS__})

int main(void)
{
	hosts("node01", 1, H("node01"));
	hosts("node[01-04,07],gpu5", 6, H("node01", "node02", "node03", "node04", "node07", "gpu5"));
	hosts("rack[1-2]n[01-02]", 4, H("rack1n01", "rack1n02", "rack2n01", "rack2n02"));
	hosts("a[8-10]", 3, H("a8", "a9", "a10"));
	hosts("a[008-010],b", 4, H("a008", "a009", "a010", "b"));
	hosts("x-[1-2]-ib,10.0.0.[7]", 3, H("x-1-ib", "x-2-ib", "10.0.0.7"));
	hosts("[3-4]", 2, H("3", "4"));
	CHECK_EQ_INT(rdv_hostlist_count("n[1-100000]"), 100000);

	static const char *const bad[] = {
		"",         "node[",    "node[]",    "node[1-]",  "node[2-1]",     "node]1",   "a,,b", "a,",    ",a",
		"node[1,]", "node[,1]", "node[[1]]", "node[a-b]", "n[1234567890]", "n[1-2-3]", "a b",  "n[1]]", NULL};
	for (const char *const *b = bad; *b; b++) {
		char out[32];
		long n = rdv_hostlist_count(*b);
		int rc = rdv_hostlist_nth(*b, 0, out, sizeof out);
		if (n != -EINVAL || rc != -EINVAL) {
			fprintf(stderr, "'%s' accepted (count %ld, nth %d)\n", *b, n, rc);
			exit(1);
		}
	}
	char small[5];
	CHECK_EQ_INT(rdv_hostlist_nth("node[01-02]", 1, small, sizeof small), -ENAMETOOLONG);
	CHECK_EQ_INT(rdv_hostlist_nth("node[01-02]", -1, small, sizeof small), -EINVAL);

	int tasks, nodes;
	long total;
	CHECK_OK(rdv_tasks_per_node("4(x2)", 1, &tasks, &nodes, &total));
	CHECK(tasks == 4 && nodes == 2 && total == 8);
	CHECK_OK(rdv_tasks_per_node("2(x3),1", 3, &tasks, &nodes, &total));
	CHECK(tasks == 1 && nodes == 4 && total == 7);
	CHECK_OK(rdv_tasks_per_node("2(x3),1", 2, &tasks, NULL, NULL));
	CHECK_EQ_INT(tasks, 2);
	CHECK_OK(rdv_tasks_per_node("3,5(x2),16", -1, NULL, &nodes, &total));
	CHECK(nodes == 4 && total == 29);
	CHECK_EQ_INT(rdv_tasks_per_node("2(x3),1", 4, &tasks, NULL, NULL), -ERANGE);
	static const char *const badt[] = {"",      "4(x2", "(x2)", "4(2)",   "4,",       ",4", "0",
					   "4(x0)", "4x2",  "a",    "4(x2)3", "12345678", NULL};
	for (const char *const *b = badt; *b; b++)
		if (rdv_tasks_per_node(*b, 0, &tasks, &nodes, &total) != -EINVAL) {
			fprintf(stderr, "tasks per node '%s' accepted\n", *b);
			exit(1);
		}
	printf("ok\n");
	return 0;
}
