# trainer/comm/: the collective interface with its same-host shared-memory backend for CPU
# ranks, the bucketed all-reduce over the flat gradient buffer, and the rendezvous (ranks from
# flags, torchrun or Slurm; rank 0's bootstrap blob over TCP, a shared file or the ring).
PUBLIC_HEADERS += trainer/comm/comm.h
USES_trainer/comm := kernels shm-layout common
LIBS += comm
comm_SRCS := trainer/comm/comm.c trainer/comm/comm_local.c trainer/comm/comm_shm.c trainer/comm/comm_shm_thread.c \
             trainer/comm/comm_bucket.c \
             trainer/comm/rdv_env.c trainer/comm/rdv_syntax.c trainer/comm/rdv_exchange.c trainer/comm/rdv_tcp.c

# the NCCL backend when NCCL was found (a program that uses it links $(NCCL_LIBS)), else a stub
# that says the build has none
ifeq ($(HAVE_NCCL)$(HAVE_CUDART),11)
comm_SRCS += trainer/comm/comm_nccl.c trainer/comm/comm_nccl_setup.c
$(BUILD)/obj/trainer/comm/comm_nccl.o $(BUILD)/obj/trainer/comm/comm_nccl_setup.o: CFLAGS += $(NCCL_CFLAGS)
COMM_LDLIBS := $(NCCL_LIBS)
else
comm_SRCS += trainer/comm/comm_nccl_none.c
COMM_LDLIBS :=
endif

TESTS += test_comm_collectives test_comm_dead_rank test_comm_determinism test_comm_buckets \
         test_comm_badinput test_comm_pid_reuse test_comm_group
test_comm_pid_reuse_WHITEBOX := trainer/comm # writes a rank's start time into the header (comm_shm_layout.h)
SAN_TESTS += test_comm_collectives test_comm_dead_rank test_comm_determinism test_comm_buckets

# the rendezvous: environment parsing and Slurm syntaxes, then the id exchange over loopback TCP,
# a file and the ring between forked ranks (timeouts included); no GPU needed
TESTS += test_rdv_env test_rdv_hostlist test_rdv_tcp test_rdv_tcp_errors test_rdv_file test_rdv_ring test_rdv_file_hostile
$(foreach t,test_rdv_env test_rdv_hostlist test_rdv_tcp test_rdv_tcp_errors test_rdv_file test_rdv_ring test_rdv_file_hostile,$(eval $(t)_LIBS := comm shm-layout common))

# the NCCL backend on one GPU (make test-gpu; exit 77 without a GPU or the CUDA backend), built in
# every make so that it keeps linking
ifeq ($(HAVE_NCCL)$(HAVE_CUDART),11)
comm_cuda = $(if $(filter kcubackend,$(LIBS)),$(1))
GPU_TESTS += test_comm_nccl_gpu
test_comm_nccl_gpu_SRCS := tests/test_comm_nccl.c
test_comm_nccl_gpu_LIBS = comm kernels shm-layout stream common $(call comm_cuda,$(KCUDA_LIBS))
test_comm_nccl_gpu_LDLIBS = $(COMM_LDLIBS) $(call comm_cuda,$(KCUDA_LDLIBS))
$(BUILD)/tests/test_comm_nccl_gpu: LDFLAGS += $(call comm_cuda,$(KCUDA_LDFLAGS))
all: $(BUILD)/tests/test_comm_nccl_gpu
endif

# the NCCL backend between two rank threads on a fake NCCL and CUDA runtime (tests/fake_nccl.c, in
# place of libnccl and libcudart: a non-blocking call stays ncclInProgress for a seeded number of
# polls, a stream is a queue): no GPU needed, only the headers; under TSan too
ifeq ($(HAVE_NCCL)$(HAVE_CUDART),11)
TESTS += test_comm_nccl_fake
SAN_TESTS += test_comm_nccl_fake
SEEDED_TESTS += test_comm_nccl_fake
test_comm_nccl_fake_SRCS := tests/test_comm_nccl_fake.c tests/fake_nccl.c
test_comm_nccl_fake_LIBS := comm kernels shm-layout stream common
test_comm_nccl_fake_WHITEBOX := kernels/backend # defines the CUDA backend's table (kern_backend.h) on the fake
$(BUILD)/obj/tests/test_comm_nccl_fake.o $(BUILD)/obj/tests/fake_nccl.o: CFLAGS += $(NCCL_CFLAGS)
endif
