# trainer/fastclip/: FastCLIP losses, temperature rules and the distributed step (issue 6).
LIBS += fastclip
fastclip_SRCS := trainer/fastclip/fastclip_config.c trainer/fastclip/fastclip_tables.c \
                 trainer/fastclip/fastclip_loss.c trainer/fastclip/fastclip_openclip.c \
                 trainer/fastclip/fastclip_temp.c trainer/fastclip/fastclip_step.c \
                 trainer/fastclip/fastclip_flags.c

TESTS += test_fastclip_grad_fcco test_fastclip_grad_openclip test_fastclip_badinput \
         test_fastclip_twin test_fastclip_flags test_fastclip_dist test_fastclip_step_deadrank
# the multi-process tests also run under ASan+UBSan and TSan (make test-san)
SAN_TESTS += test_fastclip_dist
