# trainer/ FastCLIP losses, temperature rules and the shared-memory comm backend (issue 6).
LIBS += fastclip
fastclip_SRCS := trainer/fastclip_config.c trainer/fastclip_tables.c trainer/fastclip_loss.c \
                 trainer/fastclip_openclip.c trainer/fastclip_temp.c \
                 trainer/fastclip_step.c
TESTS += test_fastclip_grad_fcco
TESTS += test_fastclip_grad_openclip
TESTS += test_fastclip_badinput
TESTS += test_fastclip_twin
LIBS += comm
comm_SRCS := trainer/comm.c trainer/comm_shm.c trainer/comm_bucket.c
TESTS += test_comm_collectives
TESTS += test_comm_dead_rank
TESTS += test_comm_determinism test_comm_buckets
TESTS += test_comm_badinput
TESTS += test_fastclip_dist
