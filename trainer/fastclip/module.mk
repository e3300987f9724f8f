# trainer/fastclip/: the FastCLIP and OpenCLIP losses of the data-parallel step (issue 6): their
# hyper-parameters and flags, and the exchange on device buffers through the loss ops and comm.
PUBLIC_HEADERS += trainer/fastclip/fastclip.h
USES_trainer/fastclip := trainer/comm kernels shm-layout common
LIBS += fastclip
fastclip_SRCS := trainer/fastclip/fastclip_config.c trainer/fastclip/fastclip_flags.c trainer/fastclip/fastclip_exchange.c

TESTS += test_fastclip_grad_fcco test_fastclip_grad_openclip test_fastclip_badinput \
         test_fastclip_twin test_fastclip_flags test_fastclip_dist test_fastclip_step_deadrank
# the multi-process tests also run under ASan+UBSan and TSan (make test-san)
SAN_TESTS += test_fastclip_dist
