# kernels/cuda/attn/: attention on the GPU (DESIGN §6, §8): the own FlashAttention-2-style kernels
# (kattn_fwd.cu, kattn_bwd.cu), cuDNN's fused attention through its graph API (kattn_cudnn.c, when
# cuDNN 9 is detected) and the selection between them (kattn.c), behind kattn.h. The kernels are
# also built for the CPU execution shim, so test_kattn (and test_kattn_lengths, every short length)
# checks them against the CPU reference in every make test; test_kattn_gpu checks both
# implementations on a device.
KATTN_CU := kernels/cuda/attn/kattn_fwd.cu kernels/cuda/attn/kattn_bwd.cu
KATTN_CUDNN_SRCS := kernels/cuda/attn/kattn_cudnn.c kernels/cuda/attn/kattn_cudnn_graph.c
# cuDNN's headers wherever mk/detect.sh found them (a wheel's include/), for the library and for
# test_kattn_cudnn_graph, which compiles the same sources in a build without nvcc too
$(BUILD)/obj/kernels/cuda/attn/%.o: CFLAGS += $(if $(filter 1,$(HAVE_CUDNN)),$(CUDNN_CFLAGS) -DHAVE_CUDNN=1) $(CUDART_CFLAGS)

ifeq ($(HAVE_NVCC)$(HAVE_CUDART),11)
LIBS += kattn
kattn_CU_SRCS := $(KATTN_CU)
kattn_SRCS := kernels/cuda/attn/kattn.c $(if $(filter 1,$(HAVE_CUDNN)),$(KATTN_CUDNN_SRCS))
KATTN_LDLIBS := $(CUDART_LIBS) $(if $(filter 1,$(HAVE_CUDNN)),$(CUDNN_LIBS))
GPU_TESTS += test_kattn_gpu
GPU_SANITIZE_TESTS += test_kattn_gpu
test_kattn_gpu_CU_SRCS := tests/test_kattn.cu
test_kattn_gpu_LIBS := kattn kcuda kernels stream common
test_kattn_gpu_LDLIBS := $(KATTN_LDLIBS) -lstdc++
$(BUILD)/obj/tests/test_kattn.cu.o $(BUILD)/obj/tests/bench_kernels.cu.o: NVCCFLAGS += -Ikernels/cuda/attn
# nvcc builds the device test in every make: warnings, and the spill check over its kernels
all: $(BUILD)/tests/test_kattn_gpu
endif

ifeq ($(HAVE_CUDA_EMU),1)
TEST_LIBS += kattnemu
kattnemu_SRCS := $(KATTN_CU)
TESTS += test_kattn test_kattn_lengths
SEEDED_TESTS += test_kattn test_kattn_lengths
ASAN_TESTS += test_kattn test_kattn_lengths
test_kattn_SRCS := tests/test_kattn.cu
test_kattn_LIBS := kattnemu kemu kernels stream common
test_kattn_LDLIBS := -lstdc++
# the same harness over every length 1..130 and the remainders of 785 and 3137 tokens
test_kattn_lengths_SRCS := tests/test_kattn_lengths.cu
test_kattn_lengths_LIBS := $(test_kattn_LIBS)
test_kattn_lengths_LDLIBS := -lstdc++
$(BUILD)/obj/emu/tests/test_kattn.o $(BUILD)/obj/emu/tests/test_kattn_lengths.o: EMU_CXXFLAGS += -Ikernels -Ikernels/cuda/attn -Itests
endif

# the cuDNN graphs finalize in the library without a device (make test, wherever cuDNN 9 is)
ifeq ($(HAVE_CUDNN)$(HAVE_CUDART),11)
TESTS += test_kattn_cudnn_graph
test_kattn_cudnn_graph_SRCS := tests/test_kattn_cudnn_graph.c $(KATTN_CUDNN_SRCS)
test_kattn_cudnn_graph_LIBS := kcuda
test_kattn_cudnn_graph_LDLIBS := $(CUDNN_LIBS)
$(BUILD)/obj/tests/test_kattn_cudnn_graph.o: CFLAGS += -Ikernels/cuda -Ikernels/cuda/attn $(CUDNN_CFLAGS) $(CUDART_CFLAGS)
endif
