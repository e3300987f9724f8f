// Who this rank is: ranks from flags or the launcher's environment, and its place in its
// machine's ring (the device and the communicator: trainer_dist_open.c, part of the program).
#include "trainer_dist.h" // defines: trainer_dist_resolve, ...

#include <errno.h>  // defines: EINVAL, ENOENT, ENODEV, ENOTSUP
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: getenv
#include <string.h> // defines: strcmp, strerror

int trainer_dist_resolve(TrainerConfig *c, char *err, size_t errlen)
{
	RdvOptions o;
	rdv_options_default(&o);
	o.rank = c->rank;
	o.world_size = c->ranks > 0 ? c->ranks : -1;
	// --ranks alone (launcher modes, or a hand-started rank 0) without a launcher to name the rank
	if (o.rank < 0 && o.world_size > 0 && !getenv("RANK") && !getenv("SLURM_PROCID"))
		o.rank = 0;
	o.master = c->master[0] ? c->master : NULL;
	o.file = c->rdv_file[0] ? c->rdv_file : NULL;
	o.timeout_ms = (int)(c->comm_timeout * 1000 > 2e9 ? 2e9 : c->comm_timeout * 1000);
	if (rdv_method_parse(c->rdv, &o.method) < 0) {
		snprintf(err, errlen, "--rdv '%s' is not auto, tcp, file or ring", c->rdv);
		return -EINVAL;
	}
	if (c->rank >= 0 && c->ranks > 0 && c->rank >= c->ranks) {
		snprintf(err, errlen, "--rank %d must be below --ranks %d", c->rank, c->ranks);
		return -EINVAL;
	}
	char why[512];
	int rc = rdv_resolve(&c->rdv_info, &o, NULL, why, sizeof why);
	if (rc < 0) {
		snprintf(err, errlen, "who is this rank: %s", why);
		return rc;
	}
	const RdvInfo *i = &c->rdv_info;
	if (i->world_size > 4096) {
		snprintf(err, errlen, "a world of %d ranks (from %s) is more than this trainer's 4096", i->world_size,
			 i->source);
		return -EINVAL;
	}
	c->rank = i->rank;
	c->ranks = i->world_size;
	c->local_rank = i->local_rank;
	c->local_ranks = i->local_world_size;
	c->node = i->node_rank;
	c->nodes = i->nodes;
	return 0;
}

void trainer_dist_ring_rank(const TrainerConfig *c, int *rank, int *ranks)
{
	*rank = c->nodes > 1 ? c->local_rank : c->rank;
	*ranks = c->nodes > 1 ? c->local_ranks : c->ranks;
}
