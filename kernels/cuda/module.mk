# kernels/cuda/: the CUDA backend of the op contract (kcu_*), the CUDA kernel dialect (kcuda.h),
# tensor-core fragments (kmma.h), result checks (kcheck.h), the GEMM wrapper (kgemm.h), the CPU
# execution shim (emu/) and its example kernels.
# Kernel tests are .cu files built twice: with g++ for the shim (make test) and with nvcc for a
# device (make test-gpu, exit 77 without a GPU). The shim is linked into tests only, never into
# a program (tests/test_kemu_not_in_programs.sh holds that).

$(BUILD)/obj/kernels/cuda/%.o: CFLAGS += -Ikernels/cuda $(CUDA_EMU_CFLAGS)

# what the CUDA backend links: result checks and kgemm on cuBLASLt
ifeq ($(HAVE_CUDART),1)
LIBS += kcuda
kcuda_SRCS := kernels/cuda/kcheck.c kernels/cuda/kgemm_call.c $(if $(filter 1,$(HAVE_CUBLAS)),kernels/cuda/kgemm_lt.c)
endif

# The CUDA backend of the op contract (kcu_*): C for the device side and the table, .cu for the
# kernels. Built twice: libkcubackend (nvcc, cuBLASLt: what programs link) and libkcuemu (g++
# through the shim: what make test runs). A program gets it with $(KCUDA_LDFLAGS) (kern_ctx.c
# refers to the table weakly, so nothing else pulls CUDA in), $(KCUDA_LIBS) and $(KCUDA_LDLIBS).
KCU_C_SRCS := kernels/cuda/kcu_backend.c kernels/cuda/kcu_ops.c kernels/cuda/kcu_slow.c kernels/cuda/kcu_graph.c
KCU_CU_SRCS := kernels/cuda/kcu_gemm.cu kernels/cuda/kcu_dense.cu kernels/cuda/kcu_norm.cu kernels/cuda/kcu_embed.cu \
               kernels/cuda/kcu_tok.cu kernels/cuda/kcu_loss.cu kernels/cuda/kcu_fcco.cu kernels/cuda/kcu_optim.cu \
               kernels/cuda/kcu_cls.cu kernels/cuda/kcu_mae.cu
KCUDA_LDFLAGS := -Wl,-u,kcuda_backend
$(BUILD)/obj/emu/kernels/cuda/%.o: EMU_CXXFLAGS += -Ikernels
$(BUILD)/obj/kernels/cuda/kcu_%.o $(BUILD)/obj/kernels/cuda/emu/kattn_emu.o: CFLAGS += -Ikernels/cuda/attn
# attention is kernels/cuda/attn/'s (module-attn.mk): a program with the backend links kattn too
KCUDA_LIBS := kcubackend kattn kcuda
KCUDA_LDLIBS = $(CUBLAS_LIBS) $(KATTN_LDLIBS) -lstdc++
ifeq ($(HAVE_NVCC)$(HAVE_CUDART)$(HAVE_CUBLAS),111)
LIBS += kcubackend
kcubackend_SRCS := $(KCU_C_SRCS)
kcubackend_CU_SRCS := $(KCU_CU_SRCS)
endif

KEX_SRCS := kernels/cuda/examples/kex_blocksum.cu kernels/cuda/examples/kex_softmax.cu kernels/cuda/examples/kex_mma_gemm.cu
# kernel tests: tests/NAME.cu -> NAME (shim) and NAME_gpu (device)
KCUDA_TESTS := test_kemu_barrier test_kemu_warp test_kemu_smem test_kemu_atomic test_kemu_bf16 test_kemu_mma \
               test_kemu_cpasync test_kemu_launch test_kex test_kemu_graph

ifeq ($(HAVE_CUDA_EMU),1)
# the shim: an archive outside LIBS, so no program can pick its cudaMalloc up
TEST_LIBS += kemu
kemu_SRCS := kernels/cuda/emu/kemu_fiber.cpp kernels/cuda/emu/kemu_launch.cpp kernels/cuda/emu/kemu_runtime.cpp \
             kernels/cuda/emu/kemu_warp.cpp kernels/cuda/emu/kemu_async.cpp kernels/cuda/emu/kemu_check.cpp kernels/cuda/emu/kemu_sched.cpp kernels/cuda/emu/kemu_graph.cpp kernels/cuda/emu/kgemm_ref.c kernels/cuda/emu/kgemm_emu.c \
             kernels/cuda/kcheck.c kernels/cuda/kgemm_call.c $(KEX_SRCS)
# the shim's memory checkers (emu/kemu_check.cpp: races, uninitialized shared memory, blocks
# writing the same bytes) see every load and store of a kernel through g++'s ThreadSanitizer
# instrumentation of the .cu files, without its runtime. Not under a sanitizer (SAN=), whose
# runtime owns those entry points: there the kernels are not instrumented.
ifeq ($(SAN),)
$(BUILD)/obj/emu/%.o: EMU_CXXFLAGS += -fsanitize=thread --param tsan-instrument-func-entry-exit=0 -DKEMU_CHECKED=1
$(BUILD)/obj/kernels/cuda/emu/kemu_check.o: EMU_CXXFLAGS += -DKEMU_CHECK_RUNTIME=1
endif
# the checkers' planted bugs: shim-only programs (on a device the bugs would race or hang), 77
# where the kernels are not instrumented (make test-san); and the asynchronous streams' poison
# and sticky faults
KEMU_CHECK_TESTS := test_kemu_racecheck test_kemu_initcheck test_kemu_streamorder test_kemu_poison test_kemu_sticky
TESTS += $(KEMU_CHECK_TESTS)
SEEDED_TESTS += $(KEMU_CHECK_TESTS)
$(foreach t,$(KEMU_CHECK_TESTS),$(eval $(t)_SRCS := tests/$(t).cu) $(eval $(t)_LIBS := kemu) $(eval $(t)_LDLIBS := -lstdc++))
TESTS += $(KCUDA_TESTS)
SEEDED_TESTS += $(KCUDA_TESTS) # seeded inputs and thread orders: make test-seeds sweeps them
# the CUDA backend through the shim (its host code included: streams, events, copies, kgemm's reference)
TEST_LIBS += kcuemu
kcuemu_SRCS := $(KCU_C_SRCS) $(KCU_CU_SRCS) kernels/cuda/emu/kattn_emu.c
ASAN_TESTS += $(KCUDA_TESTS) test_kemu_barrier_uctx # out-of-bounds accesses of kernels, caught on the CPU
$(foreach t,$(KCUDA_TESTS),$(eval $(t)_SRCS := tests/$(t).cu) $(eval $(t)_LIBS := kemu) $(eval $(t)_LDLIBS := -lstdc++))
# the same shim with the ucontext fallback in place of the x86-64 switch, so that it is tested
TEST_LIBS += kemuuc
kemuuc_SRCS := $(filter-out kernels/cuda/emu/kemu_fiber.cpp,$(kemu_SRCS)) kernels/cuda/emu/kemu_fiber_uctx.cpp
TESTS += test_kemu_barrier_uctx
test_kemu_barrier_uctx_SRCS := tests/test_kemu_barrier.cu
test_kemu_barrier_uctx_LIBS := kemuuc
test_kemu_barrier_uctx_LDLIBS := -lstdc++

# make bench-kemu: the shim's speed (fiber switches/s, barriers, shuffles, mma), both switches
BENCHES += bench_kemu bench_kemu_uctx
bench_kemu_SRCS := tests/bench_kemu.cu
bench_kemu_uctx_SRCS := tests/bench_kemu.cu
bench_kemu_LIBS := kemu
bench_kemu_uctx_LIBS := kemuuc
bench_kemu_LDLIBS := -lstdc++
bench_kemu_uctx_LDLIBS := -lstdc++
.PHONY: bench-kemu
bench-kemu: $(BUILD)/tests/bench_kemu $(BUILD)/tests/bench_kemu_uctx
	$(BUILD)/tests/bench_kemu_uctx | tail -n 1
	$(BUILD)/tests/bench_kemu
$(BUILD)/obj/emu/tests/%.o: EMU_CXXFLAGS += -Itests -Ikernels/cuda/examples
endif

ifeq ($(HAVE_NVCC)$(HAVE_CUDART),11)
TEST_LIBS += kexgpu
kexgpu_CU_SRCS := $(KEX_SRCS)
GPU_TESTS += $(addsuffix _gpu,$(KCUDA_TESTS))
GPU_SANITIZE_TESTS += $(addsuffix _gpu,$(KCUDA_TESTS))
$(foreach t,$(KCUDA_TESTS),$(eval $(t)_gpu_CU_SRCS := tests/$(t).cu) $(eval $(t)_gpu_LIBS := kexgpu kcuda) \
	$(eval $(t)_gpu_LDLIBS := $(CUDART_LIBS) -lstdc++))
$(BUILD)/obj/tests/%.cu.o: NVCCFLAGS += -Itests -Ikernels/cuda/examples
# nvcc compiles every kernel for every target arch in `make`: warnings are errors, and the spill
# check reads the resource reports
all: $(addprefix $(BUILD)/tests/,$(addsuffix _gpu,$(KCUDA_TESTS)))
endif

# The backend's twin tests (tests/kcu_twin.c): C programs on kern_ops.h alone, linked twice: NAME
# with the shim's backend (make test) and NAME_gpu with the device backend (make test-gpu, 77
# without a GPU). Both skip (77) when the other half of the build is missing.
KCU_TESTS := test_kcuda_backend test_kcuda_dense test_kcuda_embed test_kcuda_loss test_kcuda_optim test_kcuda_step \
             test_kcuda_cls test_kcuda_graph \
             test_kcuda_model test_kcuda_mae test_kcuda_mae_model
kcu_test_libs = $(if $(filter test_kcuda_model test_kcuda_mae_model,$(1)),model) $(2) kernels stream common
ifeq ($(HAVE_CUDA_EMU),1)
TESTS += $(KCU_TESTS)
SEEDED_TESTS += $(KCU_TESTS)
ASAN_TESTS += $(KCU_TESTS) # the backend's kernels and host code under AddressSanitizer (make test-san)
$(foreach t,$(KCU_TESTS),$(eval $(t)_SRCS := tests/$(t).c tests/kcu_twin.c) \
	$(eval $(t)_LIBS := $(call kcu_test_libs,$(t),kcuemu kattnemu kemu)) $(eval $(t)_LDLIBS := -lstdc++) \
	$(eval $(BUILD)/tests/$(t): LDFLAGS += $(KCUDA_LDFLAGS)))
endif
ifeq ($(HAVE_NVCC)$(HAVE_CUDART)$(HAVE_CUBLAS),111)
GPU_TESTS += $(addsuffix _gpu,$(KCU_TESTS))
GPU_SANITIZE_TESTS += $(addsuffix _gpu,$(KCU_TESTS))
$(foreach t,$(KCU_TESTS),$(eval $(t)_gpu_SRCS := tests/$(t).c tests/kcu_twin.c) \
	$(eval $(t)_gpu_LIBS := $(call kcu_test_libs,$(t),$(KCUDA_LIBS))) \
	$(eval $(t)_gpu_LDLIBS := $(KCUDA_LDLIBS)) $(eval $(BUILD)/tests/$(t)_gpu: LDFLAGS += $(KCUDA_LDFLAGS)))
all: $(addprefix $(BUILD)/tests/,$(addsuffix _gpu,$(KCU_TESTS)))
endif

# the backend's own GEMM (kc_mm_own) against the reference GEMM: a kernel test of the backend's
# insides, NAME through the shim and NAME_gpu on a device
ifeq ($(HAVE_CUDA_EMU),1)
TESTS += test_kcu_mm
SEEDED_TESTS += test_kcu_mm
ASAN_TESTS += test_kcu_mm
test_kcu_mm_SRCS := tests/test_kcu_mm.cu
test_kcu_mm_LIBS := kcuemu kattnemu kemu kernels stream common
test_kcu_mm_LDLIBS := -lstdc++
endif
ifeq ($(HAVE_NVCC)$(HAVE_CUDART)$(HAVE_CUBLAS),111)
GPU_TESTS += test_kcu_mm_gpu
test_kcu_mm_gpu_CU_SRCS := tests/test_kcu_mm.cu
test_kcu_mm_gpu_SRCS := kernels/cuda/emu/kgemm_ref.c
test_kcu_mm_gpu_LIBS := $(KCUDA_LIBS) kernels stream common
test_kcu_mm_gpu_LDLIBS := $(KCUDA_LDLIBS)
all: $(BUILD)/tests/test_kcu_mm_gpu
endif
$(BUILD)/obj/emu/tests/test_kcu_mm.o $(BUILD)/obj/tests/test_kcu_mm.cu.o: EMU_CXXFLAGS += -Ikernels -Ikernels/cuda
$(BUILD)/obj/tests/test_kcu_mm.cu.o: NVCCFLAGS += -Ikernels -Ikernels/cuda

# the trainer's own step (trainer/trainer_step.c) on the backend through the shim against the CPU
# backend; a device run needs device-side comm (issue 13), so it is a shim test only
ifeq ($(HAVE_CUDA_EMU),1)
TESTS += test_kcuda_train
SEEDED_TESTS += test_kcuda_train
ASAN_TESTS += test_kcuda_train
test_kcuda_train_SRCS := tests/test_kcuda_train.c tests/kcu_twin.c
test_kcuda_train_LIBS := trainer fastclip comm model kcuemu kattnemu kemu kernels shm-layout stream data common
test_kcuda_train_LDLIBS := -lstdc++
test_kcuda_train_WHITEBOX := trainer
$(BUILD)/tests/test_kcuda_train: LDFLAGS += $(KCUDA_LDFLAGS)
# the step's metrics read back one interval late (test_step_fetch) on the backend through the shim
# issue 25 §7: the trainer's step through CUDA graphs against the eager step, bit for bit, a resume,
# the planted baked per-step value
TESTS += test_kcuda_train_graph
SEEDED_TESTS += test_kcuda_train_graph
test_kcuda_train_graph_SRCS := tests/test_kcuda_train_graph.c tests/kcu_twin.c
test_kcuda_train_graph_LIBS := $(test_kcuda_train_LIBS)
test_kcuda_train_graph_LDLIBS := -lstdc++
test_kcuda_train_graph_WHITEBOX := trainer
$(BUILD)/tests/test_kcuda_train_graph: LDFLAGS += $(KCUDA_LDFLAGS)

TESTS += test_kcuda_step_fetch
test_kcuda_step_fetch_LIBS := $(test_kcuda_train_LIBS)
test_kcuda_step_fetch_LDLIBS := -lstdc++
test_kcuda_step_fetch_WHITEBOX := trainer
$(BUILD)/tests/test_kcuda_step_fetch: LDFLAGS += $(KCUDA_LDFLAGS)
SCRIPT_TESTS += tests/test_kcuda_step_fetch_planted.sh
# --objective classify's step (issue 28 §1: mixup, drop path, dropout, two heads, the joint clipped norm)
TESTS += test_kcuda_classify
SEEDED_TESTS += test_kcuda_classify
ASAN_TESTS += test_kcuda_classify
test_kcuda_classify_SRCS := tests/test_kcuda_classify.c tests/kcu_twin.c
test_kcuda_classify_LIBS := $(test_kcuda_train_LIBS)
test_kcuda_classify_LDLIBS := -lstdc++
test_kcuda_classify_WHITEBOX := trainer
$(BUILD)/tests/test_kcuda_classify: LDFLAGS += $(KCUDA_LDFLAGS)
endif

# the trainer's ingest (copy stream, ready/freed events between two batch buffers) on the backend
# through the shim; test_kcuda_ingest_planted leaves the compute stream's wait out and must see it caught
ifeq ($(HAVE_CUDA_EMU),1)
TESTS += test_kcuda_ingest
ASAN_TESTS += test_kcuda_ingest
test_kcuda_ingest_LIBS := trainer fastclip comm model kcuemu kattnemu kemu kernels shm-layout stream data common
test_kcuda_ingest_LDLIBS := -lstdc++
test_kcuda_ingest_WHITEBOX := trainer
$(BUILD)/tests/test_kcuda_ingest: LDFLAGS += $(KCUDA_LDFLAGS)
SCRIPT_TESTS += tests/test_kcuda_ingest_planted.sh
# the bucketed all-reduce on a comm stream of its own, after each bucket's event, drained before the
# optimizer, always on asynchronous streams (make test: seed 1; make test-seeds: fresh ones); its
# planted missing drain wait must be caught
TESTS += test_kcuda_buckets
ASYNC_SEED_RUNS += $(BUILD)/tests/test_kcuda_buckets
test_kcuda_buckets_LIBS := $(test_kcuda_ingest_LIBS)
test_kcuda_buckets_SRCS := tests/test_kcuda_buckets.c tests/kcu_twin.c
test_kcuda_buckets_LDLIBS := -lstdc++
test_kcuda_buckets_WHITEBOX := trainer trainer/comm
$(BUILD)/tests/test_kcuda_buckets: LDFLAGS += $(KCUDA_LDFLAGS)
SCRIPT_TESTS += tests/test_kcuda_buckets_planted.sh
# the model twin and trainer tests again through the shim's asynchronous streams, on one seed
# (make test-seeds sweeps fresh ones)
SCRIPT_TESTS += tests/test_kemu_async.sh
ASYNC_SEED_RUNS += tests/test_kemu_async.sh
ASYNC_SEED_DEPS += $(addprefix $(BUILD)/tests/,$(KCU_TESTS) test_kcuda_train test_kcuda_ingest test_kcuda_buckets test_trainer_selfcheck \
                   test_kemu_graph test_kcuda_train_graph)
endif

# the reference GEMM against naive loops (plain C, no shim needed beyond the reference)
ifeq ($(HAVE_CUDA_EMU),1)
TESTS += test_kgemm_ref
SEEDED_TESTS += test_kgemm_ref
test_kgemm_ref_LIBS := kemu
test_kgemm_ref_LDLIBS := -lstdc++ # the shim's scheduler (kgemm_emu queues its calls) is C++
$(BUILD)/obj/tests/test_kgemm_ref.o: CFLAGS += -Ikernels/cuda
endif
SCRIPT_TESTS += tests/test_cuda_spills.sh tests/test_cuda_sass_bytes.sh tests/test_kemu_not_in_programs.sh tests/test_kemu_dialect.sh

# kgemm on cuBLASLt against the reference on the host (a device test)
ifeq ($(HAVE_CUBLAS),1)
GPU_TESTS += test_kgemm_gpu
test_kgemm_gpu_SRCS := tests/test_kgemm_gpu.c kernels/cuda/emu/kgemm_ref.c
test_kgemm_gpu_LIBS := kcuda
test_kgemm_gpu_LDLIBS := $(CUBLAS_LIBS)
$(BUILD)/obj/tests/test_kgemm_gpu.o: CFLAGS += -Ikernels/cuda $(CUDART_CFLAGS)
all: $(BUILD)/tests/test_kgemm_gpu

# make bench-kernels: own kernels against copy and cuBLASLt baselines, attention (own and cuDNN,
# kernels/cuda/module-attn.mk) against the GEMM's TFLOP/s (GPU; skips without one)
BENCHES += bench_kernels
bench_kernels_CU_SRCS := tests/bench_kernels.cu
bench_kernels_LIBS := kexgpu $(KCUDA_LIBS) kernels stream common
bench_kernels_LDLIBS := $(KCUDA_LDLIBS)
$(BUILD)/tests/bench_kernels: LDFLAGS += $(KCUDA_LDFLAGS)
.PHONY: bench-kernels
bench-kernels: $(BUILD)/tests/bench_kernels $(BUILD)/tests/bench_plan
	@$(BUILD)/tests/bench_kernels || { rc=$$?; [ $$rc = 77 ] || exit $$rc; \
		echo "bench-kernels: no GPU, so the plan of the step's kernels instead (make bench-plan)"; $(BUILD)/tests/bench_plan; }
endif

# tools/gpu-check.sh's first stage: the device, and each CUDA library's version and the file it
# was loaded from (tests/gpu_facts.c); runs without a GPU too
ifeq ($(HAVE_CUDART),1)
BENCHES += gpu_facts
gpu_facts_LIBS := kcuda # any small archive: an empty list would link them all
gpu_facts_LDLIBS := $(CUDART_LIBS) $(foreach d,CUBLAS CUDNN NCCL,$(if $(filter 1,$(HAVE_$(d))),$($(d)_LIBS))) -ldl
$(BUILD)/obj/tests/gpu_facts.o: CFLAGS += $(foreach d,CUBLAS CUDNN NCCL,$(if $(filter 1,$(HAVE_$(d))),$($(d)_CFLAGS) -DHAVE_$(d)=1)) \
                                          $(CUDART_CFLAGS)
endif
# tools/gpu-check.sh: 8 minutes at most (its stages' caps), and it builds only what they run
SCRIPT_TESTS += tests/test_gpu_check_plan.sh

# the trainer's self-check (trainer/trainer_selfcheck.c, what trainer --self-check runs on a device)
# on the backend through the shim: it passes, and a bug planted in one op fails it naming the op
ifeq ($(HAVE_CUDA_EMU),1)
TESTS += test_trainer_selfcheck
test_trainer_selfcheck_LIBS := trainer fastclip comm model kcuemu kattnemu kemu kernels shm-layout stream data common
test_trainer_selfcheck_LDLIBS := -lstdc++
test_trainer_selfcheck_WHITEBOX := trainer
$(BUILD)/tests/test_trainer_selfcheck: LDFLAGS += $(KCUDA_LDFLAGS)
endif
ifeq ($(HAVE_NVCC)$(HAVE_CUDART)$(HAVE_CUBLAS),111)
GPU_TESTS += test_trainer_selfcheck_gpu
test_trainer_selfcheck_gpu_SRCS := tests/test_trainer_selfcheck.c
test_trainer_selfcheck_gpu_LIBS = trainer fastclip comm model $(KCUDA_LIBS) kernels shm-layout stream data common
test_trainer_selfcheck_gpu_LDLIBS = $(KCUDA_LDLIBS)
test_trainer_selfcheck_gpu_WHITEBOX := trainer
$(BUILD)/tests/test_trainer_selfcheck_gpu: LDFLAGS += $(KCUDA_LDFLAGS)
all: $(BUILD)/tests/test_trainer_selfcheck_gpu
endif
