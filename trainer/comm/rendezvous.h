// Who this process is among the trainer ranks and where rank 0 is (explicit options, torchrun-style
// variables, Slurm), and the hand-over of rank 0's bootstrap blob (the NCCL unique id) to every rank.
#ifndef TRAINER_RENDEZVOUS_H
#define TRAINER_RENDEZVOUS_H
// defines: RdvMethod, RdvOptions, RdvInfo, RDV_BLOB_MAX, RDV_DEFAULT_PORT, RDV_DEFAULT_TIMEOUT_MS,
//          rdv_options_default, rdv_resolve, rdv_describe, rdv_method_name, rdv_method_parse,
//          rdv_exchange, rdv_exchange_tcp, rdv_exchange_file, rdv_exchange_ring, rdv_hostlist_count,
//          rdv_hostlist_nth, rdv_tasks_per_node, rdv_job_token

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint64_t

#include "ring.h" // defines: Ring

#define RDV_BLOB_MAX 128                 // an NCCL unique id
#define RDV_DEFAULT_PORT 29500           // without MASTER_PORT, --master-port or Slurm
#define RDV_DEFAULT_TIMEOUT_MS 300000    // every wait of the rendezvous

typedef enum {
	RDV_AUTO = 0, // file when a path is set, tcp across machines, ring on one
	RDV_TCP,      // rank 0 listens on MASTER_PORT, the others connect to MASTER_ADDR
	RDV_FILE,     // rank 0 writes a file on a shared filesystem, the others poll it
	RDV_RING,     // one machine: the ring's control block (ring_boot_*)
} RdvMethod;

// What the caller was told explicitly (flags, a config file). Each field wins over the
// environment; -1 / NULL / RDV_AUTO: not given.
typedef struct {
	int rank, world_size, local_rank, local_world_size, node_rank, nodes;
	const char *master;  // "host", "host:port", "[v6addr]:port" or a bare IPv6 address
	int master_port;
	const char *job;     // job id; ranks of one job must agree, two jobs must not
	RdvMethod method;
	const char *file;    // the file for RDV_FILE
	int timeout_ms;
} RdvOptions;

// The resolved rendezvous; every field is set.
typedef struct {
	int rank, world_size, local_rank, local_world_size, node_rank, nodes;
	char master_addr[256]; // host name or address, without brackets
	int master_port;
	char job[192];         // e.g. "slurm:1234.0", "torchrun:abc:0", "job:x", or "none"
	uint64_t token;        // rdv_job_token(job): in every message and file, so jobs never cross
	RdvMethod method;      // never RDV_AUTO
	char file[1024];
	int timeout_ms;
	const char *source;      // where the ranks came from: "flags", "torchrun", "slurm", "single"
	const char *master_from; // "--master", "MASTER_ADDR", "SLURM_STEP_NODELIST", ..., "default"
} RdvInfo;

void rdv_options_default(RdvOptions *opt);

// Fills info from opt and the environment (envp: "NAME=value" strings ending in NULL, or NULL
// for this process's environment). Precedence per value: opt, then the torchrun-style set
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE) when RANK or
// WORLD_SIZE is set, else Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID,
// SLURM_TASKS_PER_NODE, the first host of SLURM_JOB_NODELIST) when SLURM_PROCID is set, else
// one process. MASTER_ADDR / MASTER_PORT win over Slurm's first host and the default port;
// AVCLIP_JOB, AVCLIP_RDV_METHOD, AVCLIP_RDV_FILE and AVCLIP_RDV_TIMEOUT (seconds) fill the rest.
// -EINVAL with a sentence naming the variable and its value when something is missing,
// malformed or inconsistent.
int rdv_resolve(RdvInfo *info, const RdvOptions *opt, char *const *envp, char *err, size_t errlen);
// One line for the log: "rank 3/8 (local 1/4, node 0/2) from slurm, master node01:20412 (from
// SLURM_STEP_NODELIST), job slurm:1234.0, method tcp, timeout 300 s"
int rdv_describe(const RdvInfo *info, char *buf, size_t len);
const char *rdv_method_name(RdvMethod m);
// "auto", "tcp", "file", "ring" -> 0; -EINVAL otherwise
int rdv_method_parse(const char *s, RdvMethod *m);

// Rank 0 hands blob (len bytes, 1..RDV_BLOB_MAX) to every other rank; on the other ranks blob
// receives it. Every wait ends by info->timeout_ms with an error naming this rank and what it
// waited for. ring: the job's ring (RDV_RING only, else may be NULL). 0 or -errno.
int rdv_exchange(const RdvInfo *info, Ring *ring, void *blob, size_t len, char *err, size_t errlen);
// rank 0 listens on every interface at master_port and returns once every rank has its copy;
// the others connect to master_addr:master_port (IPv4, IPv6 or a host name), retrying until the
// deadline. A master of another job (token) is an error at once; it is never used.
int rdv_exchange_tcp(const RdvInfo *info, void *blob, size_t len, char *err, size_t errlen);
// rank 0 writes info->file (temp file, fsync, rename); the others poll it, ignoring a file of
// another job (token) or a torn one, until the deadline. Rank 0 does not learn who read it.
int rdv_exchange_file(const RdvInfo *info, void *blob, size_t len, char *err, size_t errlen);
// one machine: rank 0 publishes in ring's control block, the others wait for it (see ring.h)
int rdv_exchange_ring(const RdvInfo *info, Ring *ring, void *blob, size_t len, char *err, size_t errlen);

// Slurm's compressed host lists: "node[01-04,07],gpu5,rack[1-2]n[1-2]". rdv_hostlist_count
// returns the number of hosts (or -EINVAL); rdv_hostlist_nth writes host n (0-based, in Slurm's
// order: the last bracket varies fastest) to out: 0, -EINVAL (syntax), -ERANGE (n too large),
// -ENAMETOOLONG.
long rdv_hostlist_count(const char *list);
int rdv_hostlist_nth(const char *list, long n, char *out, size_t outlen);
// Slurm's tasks-per-node syntax "4(x2),3": node's task count (node < 0: none wanted) and the
// totals; 0 or -EINVAL (syntax) or -ERANGE (node beyond the list).
int rdv_tasks_per_node(const char *s, int node, int *tasks, int *nodes_total, long *tasks_total);
// 64-bit FNV-1a of the job string (never 0)
uint64_t rdv_job_token(const char *job);

#endif
