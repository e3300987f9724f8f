# trainer/comm/: the collective interface with its same-host shared-memory backend for CPU
# ranks, and the bucketed all-reduce over the flat gradient buffer.
LIBS += comm
comm_SRCS := trainer/comm/comm.c trainer/comm/comm_shm.c trainer/comm/comm_bucket.c

TESTS += test_comm_collectives test_comm_dead_rank test_comm_determinism test_comm_buckets \
         test_comm_badinput
SAN_TESTS += test_comm_collectives test_comm_dead_rank test_comm_determinism test_comm_buckets
