# trainer/ FastCLIP losses, temperature rules and the distributed step (issue 6), and comm:
# the collective interface with its same-host shared-memory backend for CPU ranks.
LIBS += fastclip
fastclip_SRCS := trainer/fastclip_config.c trainer/fastclip_tables.c trainer/fastclip_loss.c \
                 trainer/fastclip_openclip.c trainer/fastclip_temp.c trainer/fastclip_step.c \
                 trainer/fastclip_flags.c
LIBS += comm
comm_SRCS := trainer/comm.c trainer/comm_shm.c trainer/comm_bucket.c

TESTS += test_fastclip_grad_fcco test_fastclip_grad_openclip test_fastclip_badinput \
         test_fastclip_twin test_fastclip_flags test_fastclip_dist test_fastclip_step_deadrank
TESTS += test_comm_collectives test_comm_dead_rank test_comm_determinism test_comm_buckets \
         test_comm_badinput
# the multi-process tests also run under ASan+UBSan and TSan (make test-san)
SAN_TESTS += test_fastclip_dist test_comm_collectives test_comm_dead_rank test_comm_determinism \
             test_comm_buckets
