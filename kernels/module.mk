# kernels/: the op interface (kern_ops.h) and its CPU backend (fp32 reference, fp64 for
# gradient checks), OpenMP + BLAS sgemm. The CUDA backend plugs into kern_backend.h later.
LIBS += kernels
kernels_SRCS := kernels/kern_tensor.c kernels/kern_ops.c kernels/kern_cpu.c kernels/kern_cpu_f32.c \
                kernels/kern_cpu_f64.c kernels/kern_gradcheck.c

KERN_TESTS := test_kernels_linear test_kernels_layernorm test_kernels_eltwise test_kernels_embed test_kernels_attention test_kernels_attention_fd test_kernels_loss test_kernels_optim test_kernels_errors
TESTS += $(KERN_TESTS)
$(foreach t,$(KERN_TESTS),$(eval $(t)_LIBS := kernels common))
