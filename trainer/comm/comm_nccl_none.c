// A build without NCCL: the NCCL backend's functions say so (-ENOTSUP) and comm_nccl_available()
// is 0, so the trainer names what is missing instead of failing to link.
#include "comm.h" // defines: comm_nccl_open, CommNcclOptions

#include <errno.h> // defines: ENOTSUP
#include <stdio.h> // defines: snprintf

int comm_nccl_available(void)
{
	return 0;
}

size_t comm_nccl_id_bytes(void)
{
	return 0;
}

int comm_nccl_unique_id(void *blob, size_t len)
{
	return -ENOTSUP;
}

int comm_nccl_open(Comm **out, KernCtx *ctx, int rank, int world, const void *id, size_t id_len,
		   const CommNcclOptions *o, char *err, size_t errlen)
{
	snprintf(err, errlen, "rank %d: this build has no NCCL (mk/detect.sh found none): GPU ranks cannot communicate",
		 rank);
	return -ENOTSUP;
}
