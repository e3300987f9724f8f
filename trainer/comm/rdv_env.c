// Resolving the rendezvous: ranks, node layout, master address, job token, method and timeout
// from explicit options, then torchrun-style variables or Slurm's, with errors that name the
// variable and its value.
#include "rdv_internal.h" // defines: err_fmt (errbuf.h)
#include "comm.h"         // defines: RdvInfo, RdvOptions

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_RANK, F_WORLD, F_LOCAL, F_LWORLD, F_NODE, F_NODES, NF };
static const char *const flag_names[NF] = {"--rank",      "--world-size", "--local-rank", "--local-world-size",
					   "--node-rank", "--nodes"};

typedef struct {
	char *const *envp;
	char *err;
	size_t errlen;
	int v[NF];            // -1: unknown
	const char *from[NF]; // the flag or variable each value came from
	const char *tpn;      // Slurm's tasks-per-node string, for messages
	const char *tpn_var;
} Resolve;

static const char *env_get(const Resolve *r, const char *name)
{
	const char *v = NULL;
	if (!r->envp) {
		v = getenv(name);
	} else {
		size_t n = strlen(name);
		for (char *const *e = r->envp; *e && !v; e++)
			if (!strncmp(*e, name, n) && (*e)[n] == '=')
				v = *e + n + 1;
	}
	return v && *v ? v : NULL; // an empty variable counts as not set
}

// the first of the names that is set (names: NULL-terminated); *which gets its name
static const char *env_first(const Resolve *r, const char *const *names, const char **which)
{
	for (; *names; names++) {
		const char *v = env_get(r, *names);
		if (v) {
			if (which)
				*which = *names;
			return v;
		}
	}
	return NULL;
}

// a whole-string integer in [min, max]
static int parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

// field f from variable `name` when set; an unparsable value is an error naming it
static int take_int(Resolve *r, int f, const char *name, long min)
{
	const char *s = env_get(r, name);
	long v;
	if (!s)
		return 0;
	if (parse_int(s, min, 1 << 24, &v) < 0)
		return err_fmt(r->err, r->errlen, -EINVAL, "%s='%s' is not an integer in [%ld, %d]", name, s, min,
			       1 << 24);
	r->v[f] = (int)v;
	r->from[f] = name;
	return 0;
}

static int need(Resolve *r, int f, const char *launcher, const char *var)
{
	if (r->v[f] >= 0)
		return 0;
	return err_fmt(r->err, r->errlen, -EINVAL, "%s: %s is not set (and %s was not given)", launcher, var,
		       flag_names[f]);
}

static int from_torchrun(Resolve *r)
{
	int rc = 0;
	rc = rc ? rc : take_int(r, F_RANK, "RANK", 0);
	rc = rc ? rc : take_int(r, F_WORLD, "WORLD_SIZE", 1);
	rc = rc ? rc : take_int(r, F_LOCAL, "LOCAL_RANK", 0);
	rc = rc ? rc : take_int(r, F_LWORLD, "LOCAL_WORLD_SIZE", 1);
	rc = rc ? rc : take_int(r, F_NODE, "GROUP_RANK", 0);
	rc = rc ? rc : take_int(r, F_NODES, "GROUP_WORLD_SIZE", 1);
	return rc;
}

// Slurm, step values first (an srun step may use part of the job's nodes)
static int from_slurm(Resolve *r)
{
	static const char *const ntasks[] = {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS", NULL};
	static const char *const nnodes[] = {"SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES", NULL};
	static const char *const tpn[] = {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE",
					  NULL};
	const char *which = NULL;
	int rc = take_int(r, F_RANK, "SLURM_PROCID", 0);
	rc = rc ? rc : take_int(r, F_LOCAL, "SLURM_LOCALID", 0);
	rc = rc ? rc : take_int(r, F_NODE, "SLURM_NODEID", 0);
	if (!rc && env_first(r, ntasks, &which))
		rc = take_int(r, F_WORLD, which, 1);
	if (!rc && env_first(r, nnodes, &which))
		rc = take_int(r, F_NODES, which, 1);
	if (rc)
		return rc;
	r->tpn = env_first(r, tpn, &r->tpn_var);
	return 0;
}

// Slurm's tasks per node give this node's local world size and check the totals.
static int slurm_layout(Resolve *r, const int *given)
{
	int tasks = 0, list_nodes = 0;
	long total = 0;
	if (!r->tpn)
		return 0; // local world size then comes from a flag or stays unknown (an error later)
	int node = r->v[F_NODE] >= 0 ? r->v[F_NODE] : 0;
	int rc = rdv_tasks_per_node(r->tpn, -1, NULL, &list_nodes, &total);
	if (rc < 0)
		return err_fmt(r->err, r->errlen, -EINVAL,
			       "%s='%s' is not Slurm's tasks-per-node syntax (e.g. 4(x2),3)", r->tpn_var, r->tpn);
	int single = !strcmp(r->tpn_var, "SLURM_NTASKS_PER_NODE") && list_nodes == 1; // the same on every node
	rc = rdv_tasks_per_node(r->tpn, single ? 0 : node, &tasks, NULL, NULL);
	if (rc < 0)
		return err_fmt(r->err, r->errlen, -EINVAL, "node %d (%s) is beyond the %d nodes of %s='%s'", node,
			       r->from[F_NODE] ? r->from[F_NODE] : "default", list_nodes, r->tpn_var, r->tpn);
	if (!given[F_LWORLD]) {
		r->v[F_LWORLD] = tasks;
		r->from[F_LWORLD] = r->tpn_var;
	}
	if (single)
		return 0;
	if (!given[F_NODES] && r->v[F_NODES] >= 0 && r->v[F_NODES] != list_nodes)
		return err_fmt(r->err, r->errlen, -EINVAL, "%s=%d disagrees with the %d nodes of %s='%s'",
			       r->from[F_NODES], r->v[F_NODES], list_nodes, r->tpn_var, r->tpn);
	if (!given[F_NODES] && r->v[F_NODES] < 0) {
		r->v[F_NODES] = list_nodes;
		r->from[F_NODES] = r->tpn_var;
	}
	if (!given[F_WORLD] && r->v[F_WORLD] >= 0 && r->v[F_WORLD] != total)
		return err_fmt(r->err, r->errlen, -EINVAL, "%s=%d disagrees with the %ld tasks of %s='%s'",
			       r->from[F_WORLD], r->v[F_WORLD], total, r->tpn_var, r->tpn);
	return 0;
}

// values no launcher gave: one machine, or a homogeneous split over the given node count
static void derive(Resolve *r)
{
	int *v = r->v;
	if (v[F_RANK] < 0 && v[F_WORLD] < 0) {
		v[F_RANK] = 0;
		v[F_WORLD] = 1;
		r->from[F_RANK] = r->from[F_WORLD] = "default";
	}
	if (v[F_NODES] < 0 && v[F_LWORLD] > 0 && v[F_WORLD] > 0 && v[F_WORLD] % v[F_LWORLD] == 0) {
		v[F_NODES] = v[F_WORLD] / v[F_LWORLD];
		r->from[F_NODES] = "world size / local world size";
	}
	if (v[F_NODES] < 0 && (v[F_LWORLD] < 0 || v[F_LWORLD] == v[F_WORLD])) {
		v[F_NODES] = 1;
		r->from[F_NODES] = "default";
	}
	if (v[F_NODES] < 0)
		return; // an uneven split needs the node count: check_layout says so
	if (v[F_LWORLD] < 0 && v[F_WORLD] > 0 && v[F_WORLD] % v[F_NODES] == 0) {
		v[F_LWORLD] = v[F_WORLD] / v[F_NODES];
		r->from[F_LWORLD] = "world size / nodes";
	}
	if (v[F_LOCAL] < 0 && v[F_RANK] >= 0 && v[F_LWORLD] > 0) {
		v[F_LOCAL] = v[F_RANK] % v[F_LWORLD];
		r->from[F_LOCAL] = "rank mod local world size";
	}
	if (v[F_NODE] < 0 && v[F_RANK] >= 0 && v[F_LWORLD] > 0) {
		v[F_NODE] = v[F_RANK] / v[F_LWORLD];
		r->from[F_NODE] = "rank / local world size";
	}
}

static int below(Resolve *r, int a, int b)
{
	if (r->v[a] < r->v[b])
		return 0;
	return err_fmt(r->err, r->errlen, -EINVAL, "%s %d (from %s) is not below %s %d (from %s)", flag_names[a] + 2,
		       r->v[a], r->from[a], flag_names[b] + 2, r->v[b], r->from[b]);
}

static int check_layout(Resolve *r, const char *launcher)
{
	static const char *const var[NF] = {"the rank",      "the world size", "the local rank", "the local world size",
					    "the node rank", "the node count"};
	if (r->v[F_NODES] < 0 && r->v[F_WORLD] > 0 && r->v[F_LWORLD] > 0)
		return err_fmt(r->err, r->errlen, -EINVAL,
			       "%d ranks (from %s) do not split evenly into nodes of %d (from %s): give the node count "
			       "(GROUP_WORLD_SIZE or --nodes)",
			       r->v[F_WORLD], r->from[F_WORLD], r->v[F_LWORLD], r->from[F_LWORLD]);
	for (int f = 0; f < NF; f++)
		if (r->v[f] < 0)
			return err_fmt(r->err, r->errlen, -EINVAL, "%s: %s is unknown (give %s)", launcher, var[f],
				       flag_names[f]);
	int rc = below(r, F_RANK, F_WORLD);
	rc = rc ? rc : below(r, F_LOCAL, F_LWORLD);
	rc = rc ? rc : below(r, F_NODE, F_NODES);
	if (rc)
		return rc;
	if (r->v[F_LWORLD] > r->v[F_WORLD] || r->v[F_NODES] > r->v[F_WORLD])
		return err_fmt(r->err, r->errlen, -EINVAL,
			       "%d ranks (from %s) cannot fill %d nodes (from %s) with %d ranks on this one (from %s)",
			       r->v[F_WORLD], r->from[F_WORLD], r->v[F_NODES], r->from[F_NODES], r->v[F_LWORLD],
			       r->from[F_LWORLD]);
	if (r->v[F_NODES] == 1 && r->v[F_LWORLD] != r->v[F_WORLD])
		return err_fmt(r->err, r->errlen, -EINVAL,
			       "one node, but %d local ranks (from %s) and %d ranks (from %s)", r->v[F_LWORLD],
			       r->from[F_LWORLD], r->v[F_WORLD], r->from[F_WORLD]);
	// with the same count on every node, ranks are numbered node by node (torchrun, srun's block
	// distribution); anything else is a launcher's mistake or a mix of two launchers' variables
	if (r->v[F_WORLD] == r->v[F_NODES] * r->v[F_LWORLD] && !strcmp(launcher, "torchrun") &&
	    r->v[F_RANK] != r->v[F_NODE] * r->v[F_LWORLD] + r->v[F_LOCAL])
		return err_fmt(r->err, r->errlen, -EINVAL,
			       "rank %d (from %s) is not node %d x %d + local rank %d (from %s, %s, %s)", r->v[F_RANK],
			       r->from[F_RANK], r->v[F_NODE], r->v[F_LWORLD], r->v[F_LOCAL], r->from[F_NODE],
			       r->from[F_LWORLD], r->from[F_LOCAL]);
	return 0;
}

// "host", "host:port", "[v6]:port", "[v6]", or a bare IPv6 address ("fe80::1")
static int split_master(const char *s, char *host, size_t hostlen, int *port)
{
	const char *h = s, *colon = NULL;
	size_t n;
	*port = -1;
	if (*s == '[') {
		const char *close = strchr(s, ']');
		if (!close || (close[1] && close[1] != ':'))
			return -EINVAL;
		h = s + 1;
		n = (size_t)(close - h);
		colon = close[1] ? close + 1 : NULL;
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':')) // a bare IPv6 address
			colon = NULL;
		n = colon ? (size_t)(colon - s) : strlen(s);
	}
	if (n == 0 || n >= hostlen)
		return -EINVAL;
	memcpy(host, h, n);
	host[n] = '\0';
	if (colon) {
		long p;
		if (parse_int(colon + 1, 1, 65535, &p) < 0)
			return -EINVAL;
		*port = (int)p;
	}
	return 0;
}

static int resolve_master(Resolve *r, RdvInfo *info, const RdvOptions *opt)
{
	static const char *const lists[] = {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST", NULL};
	int port = -1;
	const char *s = NULL, *which = NULL;
	long v;
	if (opt->master) {
		if (split_master(opt->master, info->master_addr, sizeof info->master_addr, &port) < 0)
			return err_fmt(r->err, r->errlen, -EINVAL,
				       "--master '%s' is not host, host:port, [ipv6]:port or an IPv6 address",
				       opt->master);
		info->master_from = "--master";
	} else if ((s = env_get(r, "MASTER_ADDR"))) {
		size_t n = strlen(s);
		if (*s == '[' && n > 2 && s[n - 1] == ']') // brackets around an IPv6 address
			s++, n -= 2;
		if (n >= sizeof info->master_addr)
			return err_fmt(r->err, r->errlen, -EINVAL, "MASTER_ADDR is longer than %zu bytes",
				       sizeof info->master_addr - 1);
		memcpy(info->master_addr, s, n);
		info->master_addr[n] = '\0';
		info->master_from = "MASTER_ADDR";
	} else if (!strcmp(info->source, "slurm") && (s = env_first(r, lists, &which))) {
		int rc = rdv_hostlist_nth(s, 0, info->master_addr, sizeof info->master_addr);
		if (rc < 0)
			return err_fmt(r->err, r->errlen, -EINVAL,
				       "%s='%s' is not a Slurm host list (e.g. node[01-04,07],gpu5)", which, s);
		info->master_from = which;
	} else {
		snprintf(info->master_addr, sizeof info->master_addr, "127.0.0.1");
		info->master_from = "default";
	}
	if (opt->master_port > 0 && port > 0 && opt->master_port != port)
		return err_fmt(r->err, r->errlen, -EINVAL, "--master '%s' and --master-port %d name two ports",
			       opt->master, opt->master_port);
	if (port < 0 && opt->master_port > 0)
		port = opt->master_port;
	if (port < 0 && (s = env_get(r, "MASTER_PORT"))) {
		if (parse_int(s, 1, 65535, &v) < 0)
			return err_fmt(r->err, r->errlen, -EINVAL, "MASTER_PORT='%s' is not a port (1-65535)", s);
		port = (int)v;
	}
	// Slurm: a port of the job's own, so two jobs sharing a node do not collide (below Linux's
	// ephemeral range)
	if (port < 0 && !strcmp(info->source, "slurm") && (s = env_get(r, "SLURM_JOB_ID")) &&
	    parse_int(s, 0, 0x7fffffffL, &v) == 0)
		port = 20000 + (int)(v % 10000);
	info->master_port = port > 0 ? port : RDV_DEFAULT_PORT;
	return 0;
}

// The job string: the flag, AVCLIP_JOB, torchrun's run id, Slurm's job and step; restart
// counts are added so an attempt never takes a previous attempt's file.
static void resolve_job(Resolve *r, RdvInfo *info, const RdvOptions *opt)
{
	const char *s = NULL, *step, *restart;
	size_t n = sizeof info->job;
	if (opt->job || (s = env_get(r, "AVCLIP_JOB"))) {
		snprintf(info->job, n, "job:%s", opt->job ? opt->job : s);
	} else if ((s = env_get(r, "TORCHELASTIC_RUN_ID")) && strcmp(s, "none")) {
		snprintf(info->job, n, "torchrun:%s", s);
	} else if ((s = env_get(r, "SLURM_JOB_ID"))) {
		step = env_get(r, "SLURM_STEP_ID");
		step = step ? step : env_get(r, "SLURM_STEPID");
		snprintf(info->job, n, "slurm:%s.%s", s, step ? step : "batch");
		if ((restart = env_get(r, "SLURM_RESTART_COUNT")))
			snprintf(info->job + strlen(info->job), n - strlen(info->job), ".r%s", restart);
	} else {
		snprintf(info->job, n, "none");
	}
	if (!opt->job && !env_get(r, "AVCLIP_JOB") && (restart = env_get(r, "TORCHELASTIC_RESTART_COUNT")))
		snprintf(info->job + strlen(info->job), n - strlen(info->job), "/restart%s", restart);
	info->token = rdv_job_token(info->job);
}

static int resolve_method(Resolve *r, RdvInfo *info, const RdvOptions *opt)
{
	const char *s;
	RdvMethod m = opt->method;
	if (m == RDV_AUTO && (s = env_get(r, "AVCLIP_RDV_METHOD")) && rdv_method_parse(s, &m) < 0)
		return err_fmt(r->err, r->errlen, -EINVAL, "AVCLIP_RDV_METHOD='%s' is not auto, tcp, file or ring", s);
	const char *file = opt->file ? opt->file : env_get(r, "AVCLIP_RDV_FILE");
	if (file && snprintf(info->file, sizeof info->file, "%s", file) >= (int)sizeof info->file)
		return err_fmt(r->err, r->errlen, -ENAMETOOLONG, "the rendezvous file name is too long");
	if (m == RDV_AUTO)
		m = file ? RDV_FILE : info->nodes > 1 ? RDV_TCP : RDV_RING;
	if (m == RDV_FILE && !file)
		return err_fmt(r->err, r->errlen, -EINVAL,
			       "the file method needs a path (--rdv-file or AVCLIP_RDV_FILE)");
	if (m == RDV_RING && info->nodes > 1)
		return err_fmt(
			r->err, r->errlen, -EINVAL,
			"the ring method works on one machine, but the job has %d nodes (from %s): use tcp or file",
			info->nodes, r->from[F_NODES]);
	if (m == RDV_TCP && info->nodes > 1 && !strcmp(info->master_from, "default"))
		return err_fmt(r->err, r->errlen, -EINVAL,
			       "%d nodes but no master address: set MASTER_ADDR or --master (or run under srun)",
			       info->nodes);
	info->method = m;
	return 0;
}

static int resolve_timeout(Resolve *r, RdvInfo *info, const RdvOptions *opt)
{
	const char *s = env_get(r, "AVCLIP_RDV_TIMEOUT");
	info->timeout_ms = RDV_DEFAULT_TIMEOUT_MS;
	if (opt->timeout_ms > 0) {
		info->timeout_ms = opt->timeout_ms;
	} else if (s) {
		char *end;
		errno = 0;
		double sec = strtod(s, &end);
		if (errno || end == s || *end || !(sec > 0 && sec <= 86400))
			return err_fmt(r->err, r->errlen, -EINVAL,
				       "AVCLIP_RDV_TIMEOUT='%s' is not seconds in (0, 86400]", s);
		info->timeout_ms = (int)(sec * 1000 + 0.5) > 0 ? (int)(sec * 1000 + 0.5) : 1;
	}
	return 0;
}

int rdv_resolve(RdvInfo *info, const RdvOptions *opt, char *const *envp, char *err, size_t errlen)
{
	RdvOptions none;
	if (!opt) {
		rdv_options_default(&none);
		opt = &none;
	}
	memset(info, 0, sizeof *info);
	Resolve r = {.envp = envp, .err = err, .errlen = errlen};
	const int given[NF] = {opt->rank,      opt->world_size, opt->local_rank, opt->local_world_size,
			       opt->node_rank, opt->nodes};
	int has[NF] = {0};
	for (int f = 0; f < NF; f++)
		r.v[f] = -1;
	int rc = 0;
	if (env_get(&r, "RANK") || env_get(&r, "WORLD_SIZE")) {
		info->source = "torchrun";
		rc = from_torchrun(&r);
	} else if (env_get(&r, "SLURM_PROCID")) {
		info->source = "slurm";
		rc = from_slurm(&r);
	} else {
		info->source = "single";
	}
	for (int f = 0; f < NF && !rc; f++) {
		has[f] = given[f] >= 0;
		if (has[f]) {
			r.v[f] = given[f];
			r.from[f] = flag_names[f];
			info->source = !strcmp(info->source, "single") ? "flags" : info->source;
		}
	}
	if (rc)
		return rc;
	if (!strcmp(info->source, "torchrun")) {
		static const struct {
			int f;
			const char *var;
		} req[] = {{F_RANK, "RANK"},
			   {F_WORLD, "WORLD_SIZE"},
			   {F_LOCAL, "LOCAL_RANK"},
			   {F_LWORLD, "LOCAL_WORLD_SIZE"}};
		for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
			if ((rc = need(&r, req[i].f, "torchrun-style variables", req[i].var)))
				return rc;
	} else if (!strcmp(info->source, "slurm")) {
		if ((rc = need(&r, F_WORLD, "Slurm", "SLURM_NTASKS")) ||
		    (rc = need(&r, F_LOCAL, "Slurm", "SLURM_LOCALID")))
			return rc;
		if (!r.tpn && !has[F_LWORLD])
			return err_fmt(err, errlen, -EINVAL,
				       "Slurm: SLURM_TASKS_PER_NODE is not set (and --local-world-size was not given)");
		if ((rc = slurm_layout(&r, has)))
			return rc;
	}
	derive(&r);
	if ((rc = check_layout(&r, info->source)))
		return rc;
	info->rank = r.v[F_RANK];
	info->world_size = r.v[F_WORLD];
	info->local_rank = r.v[F_LOCAL];
	info->local_world_size = r.v[F_LWORLD];
	info->node_rank = r.v[F_NODE];
	info->nodes = r.v[F_NODES];
	resolve_job(&r, info, opt);
	if ((rc = resolve_master(&r, info, opt)) || (rc = resolve_method(&r, info, opt)) ||
	    (rc = resolve_timeout(&r, info, opt)))
		return rc;
	return 0;
}

void rdv_options_default(RdvOptions *opt)
{
	*opt = (RdvOptions){.rank = -1,
			    .world_size = -1,
			    .local_rank = -1,
			    .local_world_size = -1,
			    .node_rank = -1,
			    .nodes = -1,
			    .master_port = -1,
			    .method = RDV_AUTO,
			    .timeout_ms = -1};
}

int rdv_describe(const RdvInfo *i, char *buf, size_t len)
{
	int colon6 = strchr(i->master_addr, ':') != NULL; // an IPv6 address gets brackets
	return snprintf(
		buf, len,
		"rank %d/%d (local %d/%d, node %d/%d) from %s, master %s%s%s:%d (from %s), job %s, method %s%s%s, "
		"timeout %.1f s",
		i->rank, i->world_size, i->local_rank, i->local_world_size, i->node_rank, i->nodes, i->source,
		colon6 ? "[" : "", i->master_addr, colon6 ? "]" : "", i->master_port, i->master_from, i->job,
		rdv_method_name(i->method), i->method == RDV_FILE ? " " : "", i->method == RDV_FILE ? i->file : "",
		i->timeout_ms / 1000.0);
}

const char *rdv_method_name(RdvMethod m)
{
	static const char *const names[] = {"auto", "tcp", "file", "ring"};
	return m >= RDV_AUTO && m <= RDV_RING ? names[m] : "?";
}

int rdv_method_parse(const char *s, RdvMethod *m)
{
	for (int k = RDV_AUTO; k <= RDV_RING; k++)
		if (!strcmp(s, rdv_method_name((RdvMethod)k))) {
			*m = (RdvMethod)k;
			return 0;
		}
	return -EINVAL;
}
