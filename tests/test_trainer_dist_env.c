// Who a trainer rank is, from its flags or a launcher's environment (torchrun's variables as
// tools/launch.sh exports them, Slurm's), and where it reads its machine's ring; plus the ring
// position -> global position map that keeps the data one stream across machines.
#include <stdio.h>  // defines: printf, fprintf
#include <stdlib.h> // defines: setenv, unsetenv
#include <string.h> // defines: strstr

#include "testutil.h"      // defines: EXPECT, test_failures
#include "stream.h"        // defines: stream_node_position
#include "trainer_dist.h"  // defines: trainer_dist_ring_rank
#include "trainer_flags.h" // defines: TrainerConfig, trainer_flags_parse

static const char *const VARS[] = {"RANK",
				   "WORLD_SIZE",
				   "LOCAL_RANK",
				   "LOCAL_WORLD_SIZE",
				   "GROUP_RANK",
				   "GROUP_WORLD_SIZE",
				   "MASTER_ADDR",
				   "MASTER_PORT",
				   "SLURM_PROCID",
				   "SLURM_NTASKS",
				   "SLURM_LOCALID",
				   "SLURM_NODEID",
				   "SLURM_TASKS_PER_NODE",
				   "SLURM_JOB_NODELIST",
				   "SLURM_NNODES",
				   "SLURM_JOB_ID",
				   "SLURM_STEP_ID",
				   "SLURM_STEP_NODELIST",
				   "SLURM_STEP_TASKS_PER_NODE",
				   "SLURM_STEP_NUM_TASKS",
				   "SLURM_STEP_NUM_NODES",
				   "SLURM_NTASKS_PER_NODE",
				   "TORCHELASTIC_RUN_ID",
				   "AVCLIP_JOB",
				   NULL};

static void clear_env(void)
{
	for (int i = 0; VARS[i]; i++)
		unsetenv(VARS[i]);
}

static int parse(TrainerConfig *c, const char *extra, char *err, size_t errlen)
{
	char *argv[] = {"trainer", "--run-dir",   "/tmp/x", "--dataset-size", "8", "--backend",
			"cuda",    (char *)extra, NULL};
	return trainer_flags_parse(c, extra ? 8 : 7, argv, err, errlen);
}

int main(void)
{
	static TrainerConfig c;
	char err[512];
	int rr, rn;
	clear_env();
	EXPECT(parse(&c, NULL, err, sizeof err) == 0 && c.rank == 0 && c.ranks == 1 && c.nodes == 1,
	       "no launcher: rank 0 of 1 (%s)", err);

	// launch.sh --nodes 2 --node-rank 1 with 2 ranks per machine: its second rank
	setenv("RANK", "3", 1), setenv("WORLD_SIZE", "4", 1), setenv("LOCAL_RANK", "1", 1);
	setenv("LOCAL_WORLD_SIZE", "2", 1), setenv("GROUP_RANK", "1", 1), setenv("GROUP_WORLD_SIZE", "2", 1);
	setenv("MASTER_ADDR", "node0", 1), setenv("MASTER_PORT", "29555", 1);
	int rc = parse(&c, NULL, err, sizeof err);
	EXPECT(rc == 0, "torchrun variables: %s", err);
	EXPECT(c.rank == 3 && c.ranks == 4 && c.local_rank == 1 && c.local_ranks == 2 && c.node == 1 && c.nodes == 2,
	       "torchrun: rank %d/%d local %d/%d node %d/%d", c.rank, c.ranks, c.local_rank, c.local_ranks, c.node,
	       c.nodes);
	EXPECT(!strcmp(c.rdv_info.master_addr, "node0") && c.rdv_info.master_port == 29555 &&
		       c.rdv_info.method == RDV_TCP,
	       "master %s:%d method %d", c.rdv_info.master_addr, c.rdv_info.master_port, (int)c.rdv_info.method);
	trainer_dist_ring_rank(&c, &rr, &rn);
	EXPECT(rr == 1 && rn == 2, "its machine's ring: rank %d of %d, want 1 of 2", rr, rn);
	setenv("LOCAL_RANK", "2", 1);
	EXPECT(parse(&c, NULL, err, sizeof err) < 0 && strstr(err, "LOCAL_RANK"),
	       "a local rank beyond its machine: '%s'", err);
	clear_env();

	// Slurm: srun --ntasks-per-node=2 on one machine, task 1
	setenv("SLURM_PROCID", "1", 1), setenv("SLURM_NTASKS", "2", 1), setenv("SLURM_LOCALID", "1", 1);
	setenv("SLURM_NODEID", "0", 1), setenv("SLURM_TASKS_PER_NODE", "2", 1),
		setenv("SLURM_JOB_NODELIST", "gpu[07-08]", 1);
	setenv("SLURM_NNODES", "1", 1), setenv("SLURM_JOB_ID", "4242", 1);
	rc = parse(&c, NULL, err, sizeof err);
	EXPECT(rc == 0 && c.rank == 1 && c.ranks == 2 && c.nodes == 1 && !strcmp(c.rdv_info.master_addr, "gpu07"),
	       "slurm: rc %d rank %d/%d nodes %d master %s (%s)", rc, c.rank, c.ranks, c.nodes, c.rdv_info.master_addr,
	       err);
	trainer_dist_ring_rank(&c, &rr, &rn);
	EXPECT(rr == 1 && rn == 2, "one machine: the ring has every rank (%d of %d)", rr, rn);
	// flags win over the environment
	EXPECT(parse(&c, "--rank=0", err, sizeof err) == 0 && c.rank == 0 && c.ranks == 2,
	       "--rank 0 over SLURM_PROCID");
	clear_env();
	EXPECT(parse(&c, "--backend=tpu", err, sizeof err) < 0 &&
		       strstr(err, "--backend 'tpu' is not one of cpu, cuda"),
	       "bad --backend: '%s'", err);
	EXPECT(parse(&c, "--rdv=carrier-pigeon", err, sizeof err) < 0 && strstr(err, "--rdv"), "bad --rdv: '%s'", err);

	// the global stream: 3 machines of 2 ranks; every global position exactly once, on its rank
	enum { L = 2, M = 3, P = 60 };
	unsigned char seen[P * M] = {0};
	for (uint32_t node = 0; node < M; node++)
		for (uint64_t p = 0; p < P; p++) {
			uint64_t g = stream_node_position(p, L, node, M);
			EXPECT(g < sizeof seen && g % (L * M) == node * L + p % L,
			       "p %llu node %u -> g %llu on the wrong rank", (unsigned long long)p, node,
			       (unsigned long long)g);
			if (g < sizeof seen)
				seen[g]++;
		}
	for (size_t g = 0; g < P * M; g++)
		EXPECT(seen[g] == 1, "global position %zu produced %d times", g, seen[g]);
	EXPECT(stream_node_position(17, 4, 0, 1) == 17, "one machine: ring positions are global");
	if (test_failures)
		return 1;
	printf("ranks from flags, torchrun and Slurm variables; machine rings; the global stream map\n");
	return 0;
}
