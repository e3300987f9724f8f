# trainer/ FastCLIP losses, temperature rules and the shared-memory comm backend (issue 6).
LIBS += fastclip
fastclip_SRCS := trainer/fastclip_config.c trainer/fastclip_tables.c trainer/fastclip_loss.c \
                 trainer/fastclip_openclip.c trainer/fastclip_temp.c
TESTS += test_fastclip_grad_fcco
TESTS += test_fastclip_grad_openclip
TESTS += test_fastclip_badinput
TESTS += test_fastclip_twin
