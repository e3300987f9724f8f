// The trainer's device and communicator: the kernel context of --backend on its device, then
// NCCL (id through the rendezvous), the shm group or a local communicator. In the program, not in
// libtrainer, so that only the trainer links NCCL.
#include "trainer_dist.h" // defines: trainer_dist_open_device, trainer_dist_open_comm

#include <errno.h>  // defines: EINVAL, ENOENT, ENODEV, ENOTSUP, EBUSY, EPROTO
#include <stdio.h>  // defines: snprintf
#include <string.h> // defines: strcmp, strerror

// 1 when the build links the CUDA backend into this program (module-trainer.mk): says which of the
// two reasons a --backend cuda that finds no device has
#ifndef TRAINER_HAS_CUDA
#define TRAINER_HAS_CUDA 0
#endif

int trainer_dist_open_device(const TrainerConfig *c, int threads, KernCtx **ctx, char *why, size_t whylen, char *err,
			     size_t errlen)
{
	const int cuda = !strcmp(c->backend, "cuda"), dev = c->device >= 0 ? c->device : c->local_rank;
	KCtxOptions ko = {.backend = cuda ? KERN_BACKEND_CUDA : KERN_BACKEND_CPU,
			  .device = cuda ? dev : 0,
			  .threads = cuda ? 1 : threads,
			  .attention = c->attention_impl};
	int rc = kern_ctx_create(ctx, &ko);
	if (rc == -ENOTSUP && c->attention_impl == KERN_ATTN_CUDNN)
		snprintf(err, errlen,
			 cuda ? "--attention cudnn needs cuDNN's fused attention: this build has no cuDNN"
			      : "--attention cudnn needs the CUDA backend (cuDNN's fused attention); this trainer "
				"runs the CPU backend (--backend cuda)");
	else if (rc == -ENODEV && cuda)
		snprintf(
			err, errlen, "--backend cuda: no CUDA device %d for rank %d (%s)", dev, c->rank,
			TRAINER_HAS_CUDA
				? "none visible to this process: check the driver and CUDA_VISIBLE_DEVICES"
				: "this trainer was built without the CUDA backend: it needs nvcc, cudart and cuBLAS at "
				  "build time");
	else if (rc < 0)
		snprintf(err, errlen, "cannot create the %s kernel context: %s", c->backend, strerror(-rc));
	if (rc < 0)
		return rc;
	if (cuda)
		snprintf(why, whylen, "cuda device %d (%s)", dev, c->device >= 0 ? "--device" : "the local rank");
	else
		snprintf(why, whylen, "cpu");
	return 0;
}

static int open_shm(const TrainerConfig *c, Comm **out, char *err, size_t errlen)
{
	if (c->nodes > 1) {
		snprintf(err, errlen,
			 "rank %d: CPU ranks talk through shared memory on one machine, but this job has %d "
			 "machines: across machines run GPU ranks (--backend cuda, NCCL)",
			 c->rank, c->nodes);
		return -EINVAL;
	}
	if (!c->comm[0]) {
		snprintf(err, errlen,
			 "rank %d: CPU ranks need --comm NAME, the shared-memory group (trainer query comm-create "
			 "--comm NAME --ranks %d before the ranks start)",
			 c->rank, c->ranks);
		return -EINVAL;
	}
	int rc = comm_shm_attach(c->comm, c->rank, c->comm_timeout, out);
	if (rc == -ENOENT)
		snprintf(
			err, errlen,
			"comm group '%s' does not exist (create it with: trainer query comm-create --comm %s --ranks %d)",
			c->comm, c->comm, c->ranks);
	else if (rc < 0)
		snprintf(err, errlen, "cannot join comm group '%s' as rank %d: %s", c->comm, c->rank,
			 rc == -EBUSY    ? "a live process holds that rank"
			 : rc == -EPROTO ? "segment of another version"
					 : strerror(-rc));
	else if (comm_world(*out) != c->ranks) {
		snprintf(err, errlen, "comm group '%s' has %d ranks but this run has --ranks %d", c->comm,
			 comm_world(*out), c->ranks);
		comm_close(*out);
		return -EINVAL;
	}
	return rc;
}

// rank 0 makes NCCL's id, the rendezvous hands it to every rank, then the group forms
static int open_nccl(const TrainerConfig *c, KernCtx *ctx, Ring *ring, CommFatalFn fatal, Comm **out, char *err,
		     size_t errlen)
{
	unsigned char id[RDV_BLOB_MAX];
	const size_t len = comm_nccl_id_bytes();
	if (!comm_nccl_available() || len == 0 || len > sizeof id)
		return comm_nccl_open(out, ctx, c->rank, c->ranks, id, len, NULL, err, errlen); // its sentence
	int rc = c->rank == 0 ? comm_nccl_unique_id(id, len) : 0;
	if (rc < 0) {
		snprintf(err, errlen, "rank 0: NCCL cannot make its unique id: %s", strerror(-rc));
		return rc;
	}
	char why[512];
	if ((rc = rdv_exchange(&c->rdv_info, ring, id, len, why, sizeof why)) < 0) {
		snprintf(err, errlen, "NCCL id: %s", why);
		return rc;
	}
	CommNcclOptions o = {.timeout_s = c->comm_timeout, .fatal = fatal};
	return comm_nccl_open(out, ctx, c->rank, c->ranks, id, len, &o, err, errlen);
}

int trainer_dist_open_comm(const TrainerConfig *c, KernCtx *ctx, Ring *ring, CommFatalFn fatal, Comm **out, char *err,
			   size_t errlen)
{
	const int gpu = strcmp(kern_ctx_backend_name(ctx), "cpu") != 0;
	if (c->ranks == 1 && !(c->comm[0] && !gpu)) {
		int rc = comm_local_open(out);
		if (rc < 0)
			snprintf(err, errlen, "rank 0: cannot make a local communicator: %s", strerror(-rc));
		return rc;
	}
	return gpu ? open_nccl(c, ctx, ring, fatal, out, err, errlen) : open_shm(c, out, err, errlen);
}
