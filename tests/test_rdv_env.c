// Resolving the rendezvous from torchrun-style and Slurm environments: the values, the order of
// precedence (options, torchrun, Slurm, defaults), and a clear error for each bad or missing value.
#include <errno.h>

#include "test_rdv_util.h" // defines: RdvInfo, CHECK

#define ENV(...) ((char *const[]){__VA_ARGS__, NULL})

static RdvInfo info;
static char err[512];

static int resolve(char *const *env, const RdvOptions *opt)
{
	err[0] = '\0';
	return rdv_resolve(&info, opt, env, err, sizeof err);
}

static void layout(int rank, int world, int local, int lworld, int node, int nodes)
{
	if (info.rank != rank || info.world_size != world || info.local_rank != local ||
	    info.local_world_size != lworld || info.node_rank != node || info.nodes != nodes) {
		char d[512];
		rdv_describe(&info, d, sizeof d);
		fprintf(stderr, "got %s; want rank %d/%d local %d/%d node %d/%d\n", d, rank, world, local, lworld, node,
			nodes);
		exit(1);
	}
}

// the environment (and options) must be refused with a message holding `word` and `word2`
static void refused(char *const *env, const RdvOptions *opt, const char *word, const char *word2)
{
	int rc = resolve(env, opt);
	if (rc != -EINVAL || !strstr(err, word) || (word2 && !strstr(err, word2))) {
		fprintf(stderr, "want -EINVAL naming '%s' and '%s'; got %d: %s\n", word, word2 ? word2 : "", rc, err);
		exit(1);
	}
	printf("refused: %s\n", err);
}

static void torchrun_and_precedence(void)
{
	char *const *tr = ENV("RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "MASTER_ADDR=node7",
			      "MASTER_PORT=1234", "TORCHELASTIC_RUN_ID=abc", "TORCHELASTIC_RESTART_COUNT=2");
	CHECK_OK(resolve(tr, NULL));
	layout(5, 8, 1, 4, 1, 2);
	CHECK(!strcmp(info.source, "torchrun") && !strcmp(info.master_addr, "node7") && info.master_port == 1234);
	CHECK(!strcmp(info.job, "torchrun:abc/restart2") && info.method == RDV_TCP);
	CHECK(!strcmp(info.master_from, "MASTER_ADDR"));
	// GROUP_RANK / GROUP_WORLD_SIZE are taken when torchrun sets them
	CHECK_OK(resolve(ENV("RANK=3", "WORLD_SIZE=6", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=3", "GROUP_RANK=1",
			     "GROUP_WORLD_SIZE=2", "MASTER_ADDR=h"),
			 NULL));
	layout(3, 6, 0, 3, 1, 2);

	// torchrun's set wins over Slurm's (srun starting torchrun leaves both)
	CHECK_OK(resolve(ENV("SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NODEID=0",
			     "SLURM_TASKS_PER_NODE=1(x2)", "SLURM_JOB_NODELIST=n[1-2]", "SLURM_JOB_ID=77", "RANK=5",
			     "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "MASTER_ADDR=node7",
			     "MASTER_PORT=1234"),
			 NULL));
	layout(5, 8, 1, 4, 1, 2);
	CHECK(!strcmp(info.source, "torchrun") && !strcmp(info.job, "slurm:77.batch"));

	// options win over both
	RdvOptions o;
	rdv_options_default(&o);
	o.master = "[::1]:999";
	o.job = "mine";
	o.timeout_ms = 1500;
	o.method = RDV_FILE;
	o.file = "/shared/id";
	CHECK_OK(resolve(tr, &o));
	CHECK(!strcmp(info.master_addr, "::1") && info.master_port == 999 && !strcmp(info.master_from, "--master"));
	CHECK(!strcmp(info.job, "job:mine") && info.timeout_ms == 1500 && info.method == RDV_FILE);
	CHECK(!strcmp(info.file, "/shared/id"));
	rdv_options_default(&o);
	o.master_port = 4321;
	CHECK_OK(resolve(tr, &o));
	CHECK(info.master_port == 4321 && !strcmp(info.master_addr, "node7"));
	// a rank option that contradicts the launcher's layout is an error, not a silent mix
	o.rank = 2;
	refused(tr, &o, "rank 2 (from --rank)", "LOCAL_RANK");
}

static void slurm(void)
{
	char *const *s = ENV("SLURM_PROCID=5", "SLURM_NTASKS=8", "SLURM_LOCALID=1", "SLURM_NODEID=1",
			     "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_JOB_NODELIST=gpu[07-08]", "SLURM_NNODES=2",
			     "SLURM_JOB_ID=4242", "SLURM_STEP_ID=0");
	CHECK_OK(resolve(s, NULL));
	layout(5, 8, 1, 4, 1, 2);
	CHECK(!strcmp(info.source, "slurm") && !strcmp(info.master_addr, "gpu07"));
	CHECK(!strcmp(info.master_from, "SLURM_JOB_NODELIST") && info.master_port == 20000 + 4242);
	CHECK(!strcmp(info.job, "slurm:4242.0") && info.method == RDV_TCP);

	// uneven tasks per node; the step's values and node list win over the job's
	CHECK_OK(resolve(ENV("SLURM_PROCID=4", "SLURM_NTASKS=9", "SLURM_STEP_NUM_TASKS=5", "SLURM_LOCALID=0",
			     "SLURM_NODEID=2", "SLURM_TASKS_PER_NODE=3(x3)", "SLURM_STEP_TASKS_PER_NODE=2(x2),1",
			     "SLURM_JOB_NODELIST=a0,a1,b[3-4]", "SLURM_STEP_NODELIST=a1,b[3-4]", "SLURM_JOB_ID=9",
			     "SLURM_STEPID=3", "SLURM_RESTART_COUNT=1"),
			 NULL));
	layout(4, 5, 0, 1, 2, 3);
	CHECK(!strcmp(info.master_addr, "a1") && !strcmp(info.master_from, "SLURM_STEP_NODELIST"));
	CHECK(!strcmp(info.job, "slurm:9.3.r1"));

	// SLURM_NTASKS_PER_NODE (one number, every node) when the per-node list is absent
	CHECK_OK(resolve(ENV("SLURM_PROCID=2", "SLURM_NTASKS=4", "SLURM_LOCALID=0", "SLURM_NODEID=1",
			     "SLURM_NTASKS_PER_NODE=2", "SLURM_NNODES=2", "SLURM_NODELIST=x[1-2]"),
			 NULL));
	layout(2, 4, 0, 2, 1, 2);

	// MASTER_ADDR / MASTER_PORT (set in an sbatch script) win over the node list and the job's port
	CHECK_OK(resolve(ENV("SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_NODEID=0",
			     "SLURM_TASKS_PER_NODE=2", "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=5",
			     "MASTER_ADDR=[fe80::2]", "MASTER_PORT=3000"),
			 NULL));
	layout(0, 2, 0, 2, 0, 1);
	CHECK(!strcmp(info.master_addr, "fe80::2") && info.master_port == 3000 && info.method == RDV_RING);
	// an explicit --rank beats SLURM_PROCID (Slurm's numbering is not checked against nodes)
	RdvOptions o;
	rdv_options_default(&o);
	o.rank = 1;
	o.local_rank = 1;
	CHECK_OK(resolve(ENV("SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_TASKS_PER_NODE=2",
			     "SLURM_JOB_NODELIST=n1"),
			 &o));
	layout(1, 2, 1, 2, 0, 1);
}

static void defaults_and_flags(void)
{
	CHECK_OK(resolve(ENV("HOME=/root"), NULL));
	layout(0, 1, 0, 1, 0, 1);
	CHECK(!strcmp(info.source, "single") && !strcmp(info.job, "none") && info.method == RDV_RING);
	CHECK(info.master_port == RDV_DEFAULT_PORT && info.timeout_ms == RDV_DEFAULT_TIMEOUT_MS);
	RdvOptions o;
	rdv_options_default(&o);
	o.rank = 6;
	o.world_size = 8;
	o.nodes = 2;
	o.master = "10.1.2.3:7000";
	CHECK_OK(resolve(ENV("AVCLIP_JOB=exp1", "AVCLIP_RDV_TIMEOUT=2.5"), &o));
	layout(6, 8, 2, 4, 1, 2);
	CHECK(!strcmp(info.source, "flags") && !strcmp(info.job, "job:exp1") && info.timeout_ms == 2500);
	CHECK(!strcmp(info.master_addr, "10.1.2.3") && info.master_port == 7000 && info.method == RDV_TCP);
	CHECK_OK(resolve(ENV("AVCLIP_RDV_METHOD=file", "AVCLIP_RDV_FILE=/nfs/x"), &o));
	CHECK(info.method == RDV_FILE && !strcmp(info.file, "/nfs/x"));
	CHECK_OK(resolve(ENV("AVCLIP_RDV_FILE=/nfs/x"), &o)); // a file path alone chooses the file method
	CHECK(info.method == RDV_FILE);
	o.master = "fe80::1"; // a bare IPv6 address has no port
	CHECK_OK(resolve(ENV("MASTER_PORT=2222"), &o));
	CHECK(!strcmp(info.master_addr, "fe80::1") && info.master_port == 2222);
	char d[512];
	rdv_describe(&info, d, sizeof d);
	printf("%s\n", d);
	CHECK(strstr(d, "rank 6/8 (local 2/4, node 1/2)") && strstr(d, "[fe80::1]:2222") && strstr(d, "method tcp"));
	// tokens: equal for one job, different for two
	CHECK(rdv_job_token("job:a") == rdv_job_token("job:a") && rdv_job_token("job:a") != rdv_job_token("job:b"));
}

static void bad_values(void)
{
	RdvOptions o;
	refused(ENV("RANK=abc", "WORLD_SIZE=8", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=8"), NULL, "RANK='abc'", NULL);
	refused(ENV("RANK=-1", "WORLD_SIZE=8", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=8"), NULL, "RANK='-1'", NULL);
	refused(ENV("RANK=8", "WORLD_SIZE=8", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=8"), NULL, "rank 8 (from RANK)",
		"WORLD_SIZE");
	refused(ENV("RANK=1", "WORLD_SIZE=8"), NULL, "LOCAL_RANK is not set", NULL);
	refused(ENV("WORLD_SIZE=8", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=8"), NULL, "RANK is not set", NULL);
	refused(ENV("RANK=1", "WORLD_SIZE=8", "LOCAL_RANK=5", "LOCAL_WORLD_SIZE=4"), NULL,
		"local-rank 5 (from LOCAL_RANK)", "LOCAL_WORLD_SIZE");
	refused(ENV("RANK=1", "WORLD_SIZE=6", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "MASTER_ADDR=h"), NULL,
		"do not split evenly", "GROUP_WORLD_SIZE");
	refused(ENV("RANK=1", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "MASTER_PORT=70000"), NULL,
		"MASTER_PORT='70000'", NULL);
	refused(ENV("RANK=1", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4"), NULL, "no master address", NULL);
#define SL "SLURM_PROCID=5", "SLURM_LOCALID=1", "SLURM_NODEID=1"
	refused(ENV(SL, "SLURM_NTASKS=8", "SLURM_TASKS_PER_NODE=4(x2", "SLURM_JOB_NODELIST=n[1-2]"), NULL,
		"SLURM_TASKS_PER_NODE='4(x2'", NULL);
	refused(ENV(SL, "SLURM_NTASKS=9", "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_JOB_NODELIST=n[1-2]"), NULL,
		"SLURM_NTASKS=9 disagrees", "4(x2)");
	refused(ENV(SL, "SLURM_NTASKS=8", "SLURM_NNODES=3", "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_JOB_NODELIST=n[1-2]"),
		NULL, "SLURM_NNODES=3 disagrees", NULL);
	refused(ENV("SLURM_PROCID=5", "SLURM_LOCALID=4", "SLURM_NODEID=1", "SLURM_NTASKS=8",
		    "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_JOB_NODELIST=n[1-2]"),
		NULL, "local-rank 4 (from SLURM_LOCALID)", "SLURM_TASKS_PER_NODE");
	refused(ENV("SLURM_PROCID=5", "SLURM_LOCALID=0", "SLURM_NODEID=2", "SLURM_NTASKS=8",
		    "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_JOB_NODELIST=n[1-2]"),
		NULL, "node 2 (SLURM_NODEID) is beyond", NULL);
	refused(ENV(SL, "SLURM_NTASKS=8", "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_JOB_NODELIST=n[1-"), NULL,
		"SLURM_JOB_NODELIST='n[1-'", NULL);
	refused(ENV(SL, "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_JOB_NODELIST=n[1-2]"), NULL, "SLURM_NTASKS is not set",
		NULL);
	refused(ENV(SL, "SLURM_NTASKS=8", "SLURM_JOB_NODELIST=n[1-2]"), NULL, "SLURM_TASKS_PER_NODE is not set", NULL);
	refused(ENV("AVCLIP_RDV_TIMEOUT=0"), NULL, "AVCLIP_RDV_TIMEOUT='0'", NULL);
	refused(ENV("AVCLIP_RDV_TIMEOUT=5s"), NULL, "AVCLIP_RDV_TIMEOUT='5s'", NULL);
	refused(ENV("AVCLIP_RDV_METHOD=pigeon"), NULL, "AVCLIP_RDV_METHOD='pigeon'", NULL);
	refused(ENV("AVCLIP_RDV_METHOD=file"), NULL, "needs a path", NULL);
	rdv_options_default(&o);
	o.rank = 0;
	o.world_size = 4;
	o.nodes = 2;
	o.method = RDV_RING;
	o.master = "h";
	refused(ENV("HOME=/"), &o, "one machine", "2 nodes");
	o.method = RDV_AUTO;
	o.master = "h:99999";
	refused(ENV("HOME=/"), &o, "--master 'h:99999'", NULL);
	o.master = "[::1";
	refused(ENV("HOME=/"), &o, "--master '[::1'", NULL);
	o.master = "h:80";
	o.master_port = 81;
	refused(ENV("HOME=/"), &o, "two ports", NULL);
	rdv_options_default(&o);
	o.rank = 3;
	o.world_size = 2;
	refused(ENV("HOME=/"), &o, "rank 3 (from --rank)", "--world-size");
}

int main(void)
{
	torchrun_and_precedence();
	slurm();
	defaults_and_flags();
	bad_values();
	printf("ok\n");
	return 0;
}
