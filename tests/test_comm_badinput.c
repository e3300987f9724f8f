// Bad inputs to the shm comm backend get a clear -errno: bad names and sizes, a missing or
// foreign segment, a rank outside the world, a rank already held by a live process, collectives
// on a missing buffer or stream, a dtype that does not reduce, mismatched sizes or dtypes.
#include <errno.h>    // defines: EINVAL, ENOENT, EBUSY, EPROTO
#include <fcntl.h>    // defines: O_CREAT, O_RDWR
#include <sys/mman.h> // defines: shm_open
#include <unistd.h>   // defines: ftruncate, close

#include "test_comm_util.h" // defines: tc_segment_name

static int fails;
#define EXPECT(cond)                                                                                                   \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			printf("FAIL line %d: %s\n", __LINE__, #cond);                                                 \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

int main(void)
{
	char name[64], path[80];
	tc_segment_name(name, sizeof(name), "bad");
	Comm *c = NULL, *c2 = NULL;
	EXPECT(comm_shm_create("", 2, 4096) == -EINVAL);
	EXPECT(comm_shm_create("a/b", 2, 4096) == -EINVAL);
	EXPECT(comm_shm_create(name, 0, 4096) == -EINVAL);
	EXPECT(comm_shm_create(name, COMM_SHM_MAX_WORLD + 1, 4096) == -EINVAL);
	EXPECT(comm_shm_create(name, 2, 100) == -EINVAL); // slot not a multiple of 64
	EXPECT(comm_shm_attach(name, 0, 1.0, &c) == -ENOENT);
	EXPECT(comm_shm_create(name, 2, 4096) == 0);
	EXPECT(comm_shm_attach(name, 2, 1.0, &c) == -EINVAL); // rank outside the world
	EXPECT(comm_shm_attach(name, 0, 0.0, &c) == -EINVAL); // no timeout
	EXPECT(comm_shm_attach(name, 0, 1.0, &c) == 0);
	EXPECT(comm_shm_attach(name, 0, 1.0, &c2) == -EBUSY); // this live process holds rank 0
	KernCtx *k = NULL;
	EXPECT(kern_ctx_create_cpu(&k, 1) == 0);
	float x[4];
	uint8_t b[4];
	int64_t i64[4];
	KTensor tf = tc_tensor(x, KDT_F32, 4), tu = tc_tensor(b, KDT_U8, 4), ti = tc_tensor(i64, KDT_I64, 4),
		tn = tc_tensor(NULL, KDT_F32, 4);
	EXPECT(c && comm_ctl_broadcast(c, path, 8, 5) == -EINVAL); // root outside the world
	EXPECT(c && comm_ctl_allreduce(c, NULL, 4, COMM_SUM) == -EINVAL);
	EXPECT(c && comm_allreduce(c, &tn, COMM_SUM, k) == -EINVAL);    // no buffer
	EXPECT(c && comm_allreduce(c, &tu, COMM_SUM, k) == -EINVAL);    // u8 does not reduce
	EXPECT(c && comm_allreduce(c, &tf, COMM_SUM, NULL) == -EINVAL); // no stream
	EXPECT(c && comm_allgather(c, &tf, &ti, k) == -EINVAL);         // dtypes differ
	EXPECT(c && comm_allgather(c, &tf, &tf, k) == -EINVAL);         // 2 ranks: recv must be 2 x send
	kern_ctx_destroy(k);
	if (c)
		comm_close(c);
	EXPECT(comm_shm_attach(name, 0, 1.0, &c) == 0); // a closed rank can be taken again
	if (c)
		comm_close(c);
	EXPECT(comm_shm_unlink(name) == 0);
	// a segment of the right name that is not ours
	snprintf(path, sizeof(path), "/%s", name);
	int fd = shm_open(path, O_CREAT | O_RDWR, 0600);
	EXPECT(fd >= 0 && ftruncate(fd, 8192) == 0);
	if (fd >= 0)
		close(fd);
	EXPECT(comm_shm_attach(name, 0, 1.0, &c) == -EPROTO);
	comm_shm_unlink(name);
	printf(fails ? "FAIL: %d bad inputs not rejected\n" : "all bad inputs rejected\n", fails);
	return fails ? 1 : 0;
}
