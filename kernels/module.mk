# kernels/: the op contract (kern_ops.h, the one public header), its front end (argument checks,
# devices, streams, events, memory) and the CPU backend in cpu/ (f32 reference with bf16 storage
# by rounding, f64 for gradient checks; OpenMP + BLAS). backend/ holds the private table a backend
# fills; only kernels/ sees it. The CUDA backend goes into cuda/.
LIBS += kernels
kernels_SRCS := kernels/kern_tensor.c kernels/kern_ctx.c kernels/kern_graph.c kernels/kern_ops_dense.c kernels/kern_ops_loss.c \
                kernels/kern_ops_mae.c kernels/kern_mae_host.c \
                kernels/kern_gradcheck.c kernels/cpu/kern_cpu.c kernels/cpu/kern_cpu_stage.c \
                kernels/cpu/kern_cpu_ops.c kernels/cpu/kern_cpu_augment.c kernels/cpu/kern_cpu_loss.c \
                kernels/cpu/kern_cpu_optim.c kernels/kern_ops_cls.c kernels/cpu/kern_cpu_cls.c \
                kernels/kern_cls_draw.c
# private headers of kernels/ (the backend table, the argument checks) are on its own path only;
# other folders see kern_ops.h, tests also the gradient-check helpers
PUBLIC_HEADERS += kernels/kern_ops.h kernels/kern_cls.h
TEST_HEADERS += kernels/kern_gradcheck.h
USES_kernels := stream common
$(BUILD)/obj/kernels/%.o: CFLAGS += -Ikernels/backend

KERN_TESTS := test_kernels_linear test_kernels_layernorm test_kernels_eltwise test_kernels_embed test_kernels_attention \
              test_kernels_attention_fd test_kernels_loss test_kernels_errors test_kernels_bf16 \
              test_kernels_async_error test_kernels_streams test_kernels_fused_optim test_kernels_accumulate \
              test_kernels_softce test_kernels_mixup test_kernels_cls_draw test_kernels_dropout \
              test_kernels_mae_mask test_kernels_mae
TESTS += $(KERN_TESTS)
# the CPU backend's augment op draws its flips from common's Philox (library stream)
$(foreach t,$(KERN_TESTS),$(eval $(t)_LIBS := kernels stream common))
# the loss ops against the host twin they reproduce (tests/ref/fastclip_ref)
KERN_LOSS_TESTS := test_kernels_fcco test_kernels_openclip test_kernels_temp test_fastclip_upstream_reset
TESTS += $(KERN_LOSS_TESTS)
$(foreach t,$(KERN_LOSS_TESTS),$(eval $(t)_LIBS := fastclipref fastclip kernels stream common))
