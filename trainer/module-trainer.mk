# trainer/ the trainer program (issues 6, 7, 10): orchestration only. Library libtrainer holds the
# training step on the op contract (model + FastCLIP exchange + bucketed all-reduce + fused
# optimizer + τ) and the program's modules (flags, ring ingest to the device, checkpoints,
# metrics); trainer/trainer is the main, the loop and the evaluation from an eval ring. It links
# no decoder: loaderd --eval decodes the held-out clips into that ring.
INC_DIRS += trainer
USES_trainer := eval model trainer/fastclip trainer/comm kernels shm-layout data stream common
LIBS += trainer
trainer_SRCS := trainer/trainer_step.c trainer/trainer_graph.c trainer/trainer_cls.c trainer/trainer_mae.c trainer/trainer_flags.c trainer/trainer_query.c trainer/trainer_ingest.c trainer/trainer_ckpt.c \
                trainer/trainer_metrics.c trainer/trainer_dist.c trainer/trainer_memory.c trainer/trainer_best.c
trainer_SRCS += trainer/trainer_start.c trainer/trainer_selfcheck.c trainer/trainer_selfcheck_ops.c \
                trainer/trainer_selfcheck_loss.c trainer/trainer_selfcheck_step.c trainer/trainer_selfcheck_cache.c \
                trainer/trainer_selfcheck_cls.c
PROGS += trainer/trainer
trainer/trainer_SRCS := trainer/trainer_main.c trainer/trainer_run.c trainer/trainer_eval.c trainer/trainer_dist_open.c \
                        trainer/trainer_gpu.c
# NCCL (comm's backend for GPU ranks) and, where the build has it (kernels/cuda/module.mk), the
# CUDA backend of kernels/; recursive, since that fragment may come later
trainer_cuda = $(if $(filter kcubackend,$(LIBS)),$(1))
trainer/trainer_LIBS = trainer eval fastclip comm model kernels shm-layout stream data common \
                       $(call trainer_cuda,$(KCUDA_LIBS))
trainer/trainer_LDLIBS = $(COMM_LDLIBS) $(call trainer_cuda,$(KCUDA_LDLIBS)) -ldl
trainer/trainer: LDFLAGS += $(call trainer_cuda,$(KCUDA_LDFLAGS))
$(BUILD)/obj/trainer/trainer_dist_open.o: CFLAGS += $(call trainer_cuda,-DTRAINER_HAS_CUDA=1)

TRAINER_TESTS := test_trainer_dist test_trainer_learn test_trainer_metrics test_trainer_ingest test_trainer_ingest_labels \
                 test_trainer_dist_env \
                 test_trainer_memory
# FastCLIP fidelity of the update (issue 14): one behaviour per test, so a rewrite of the
# optimizer (a fused op over the flat buffer) carries each over
TRAINER_TESTS += test_step_tau_clamp test_step_tau_lr_v0 test_step_clip_logit_scale test_fastclip_epoch
# a switch of any flag table (or --no-NAME) takes no value: the flag after it is read
TRAINER_TESTS += test_trainer_flags_switches
# issue 25 §5: the logged scalars read back one interval late, phases timed on the device
TRAINER_TESTS += test_step_fetch
# issue 28 §1: classify on K ranks equals one rank on the concatenated batch (dropout, drop path, joint norm)
TRAINER_TESTS += test_trainer_dist_cls
TESTS += $(TRAINER_TESTS)
# white-box tests of the program's modules (trainer_step.h, trainer_flags.h, ...)
$(foreach t,$(TRAINER_TESTS),$(eval $(t)_WHITEBOX := trainer))
# the augment op of kernels/ against this augmentation followed by patchify, bit for bit
TESTS += test_kernels_augment
test_kernels_augment_LIBS := augmentref kernels stream common
SAN_TESTS += test_trainer_dist
# issue 23: vocabularies and resumes refused or handled at start, before anything is made
TESTS += test_trainer_init_vocab
test_trainer_init_vocab_WHITEBOX := trainer
SCRIPT_TESTS += tests/test_trainer_vocab.sh tests/test_eval_vocab.sh tests/test_trainer_resume_batch.sh \
                tests/test_trainer_resume_steps.sh
# issue 24 §4: trainer --self-check's mode (the check itself: test_trainer_selfcheck in kernels/cuda/module.mk)
SCRIPT_TESTS += tests/test_trainer_selfcheck.sh
# end to end through a real ring fed by tests/trainer_feeder (built below) and tools/ringctl
SCRIPT_TESTS += tests/test_trainer_ring.sh tests/test_trainer_resume.sh tests/test_trainer_signal.sh \
                tests/test_trainer_badinput.sh tests/test_trainer_deadrank.sh tests/test_trainer_config.sh \
                tests/test_trainer_eval.sh tests/test_trainer_losses.sh tests/test_trainer_init_from.sh \
                tests/test_trainer_stop_nodata.sh tests/test_trainer_epochs.sh tests/test_trainer_query.sh \
                tests/test_trainer_waits.sh tests/test_trainer_ckpt_fail.sh tests/test_trainer_keep_best.sh
# --objective classify end to end: synth, a colour-labelled CSV, prep, loaderd, the trainer (77 without
# libav); its --init-from of the video tower only
SCRIPT_TESTS += tests/test_trainer_classify.sh tests/test_trainer_classify_init.sh
# --objective mae through a ring (issue 29): resume bit for bit, --grad-checkpoint, two ranks, refusals
SCRIPT_TESTS += tests/test_trainer_mae.sh
# its encoder exported (tools/export reads mae checkpoints) into clip and classify runs by --init-from
SCRIPT_TESTS += tests/test_trainer_mae_init.sh

# the synthetic ring producer the trainer's script tests run (a tool for tests, not a test);
# an explicit rule because PROG_template is defined after the fragments are included
TRAINER_FEEDER := $(BUILD)/tests/trainer_feeder
TRAINER_FEEDER_OBJS := $(BUILD)/obj/tests/trainer_feeder.o
$(TRAINER_FEEDER): $(TRAINER_FEEDER_OBJS) $(BUILD)/lib/libshm-layout.a $(BUILD)/lib/libstream.a $(BUILD)/lib/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(TRAINER_FEEDER_OBJS) -Wl,--start-group $(filter %.a,$^) -Wl,--end-group $(EXT_LDLIBS) $(LDLIBS_BASE)
ALL_OBJS += $(TRAINER_FEEDER_OBJS)
all: $(TRAINER_FEEDER)

# make bench-cpu: the trainer's own step (tiny and vit-s16, fp32 and bf16) split by phase, and the
# linear layers' GFLOP/s as a ratio to cblas_sgemm (last line)
ifeq ($(HAVE_BLAS),1)
BENCHES += bench_trainer_cpu
bench_trainer_cpu_LIBS := trainer fastclip comm model kernels shm-layout stream data common
bench_trainer_cpu_WHITEBOX := trainer
# its smoke mode (the tiny model in every slot, one step) in make test
SCRIPT_TESTS += tests/test_bench_cpu_smoke.sh
.PHONY: bench-cpu
bench-cpu: $(BUILD)/tests/bench_trainer_cpu
	$(BUILD)/tests/bench_trainer_cpu
endif

# make bench-plan: the kernels of one training step at vit-b16 (T=4 B=128, T=16 B=32) with FLOPs, bytes
# and their floor on an H200's datasheet figures, from the trainer's step run dry on the CPU backend
# with the op layer's plan recorder; no GPU. Its smoke mode (the tiny model computed and dry, on the
# CPU backend and the CUDA backend through the shim) runs in make test.
BENCHES += bench_plan
bench_plan_LIBS := trainer fastclip comm model kernels shm-layout stream data common
bench_plan_WHITEBOX := trainer
SCRIPT_TESTS += tests/test_bench_plan.sh
ifneq ($(filter kcuemu,$(TEST_LIBS)),)
BENCHES += bench_plan_emu
bench_plan_emu_SRCS := tests/bench_plan.c
bench_plan_emu_LIBS := trainer fastclip comm model kcuemu kattnemu kemu kernels shm-layout stream data common
bench_plan_emu_LDLIBS := -lstdc++
bench_plan_emu_WHITEBOX := trainer
$(BUILD)/tests/bench_plan_emu: LDFLAGS += $(KCUDA_LDFLAGS)
endif
.PHONY: bench-plan
bench-plan: $(BUILD)/tests/bench_plan
	$(BUILD)/tests/bench_plan

# make bench-gpu (tools/bench/bench_gpu.sh): the trainer on one GPU against PyTorch; exit 77 without
# a GPU. bench_gpu_peak measures the bf16 matmul peak its MFU is against (the contract's linear op).
BENCHES += bench_gpu_peak
bench_gpu_peak_SRCS := tests/bench_gpu_peak.c
bench_gpu_peak_LIBS = kernels stream common $(call trainer_cuda,$(KCUDA_LIBS))
bench_gpu_peak_LDLIBS = $(call trainer_cuda,$(KCUDA_LDLIBS))
$(BUILD)/tests/bench_gpu_peak: LDFLAGS += $(call trainer_cuda,$(KCUDA_LDFLAGS))
.PHONY: bench-gpu
bench-gpu: all $(BUILD)/tests/bench_gpu_peak $(TRAINER_FEEDER)
	@BUILD=$(BUILD) bash tools/bench/bench_gpu.sh || { rc=$$?; [ $$rc = 77 ] && echo "bench-gpu: skipped (no GPU)"; [ $$rc = 77 ]; }

# the trainer's own steps on a GPU against the CPU backend, each the device build of its shim twin
# in kernels/cuda/module.mk: the contrastive step (test_kcuda_train), the classify step
# (test_kcuda_classify), and the step through CUDA graphs against the eager one (cuBLASLt and the own
# kernels captured: test_kcuda_train_graph); make test-gpu, 77 without a GPU
TRAINER_GPU_TESTS := test_kcuda_train_gpu test_kcuda_classify_gpu test_kcuda_train_graph_gpu
ifeq ($(HAVE_NVCC)$(HAVE_CUDART)$(HAVE_CUBLAS),111)
GPU_TESTS += $(TRAINER_GPU_TESTS)
$(foreach t,$(TRAINER_GPU_TESTS),$(eval $(t)_SRCS := tests/$(t:_gpu=).c tests/kcu_twin.c) \
	$(eval $(t)_LIBS := trainer fastclip comm model $$(KCUDA_LIBS) kernels shm-layout stream data common) \
	$(eval $(t)_LDLIBS := $$(KCUDA_LDLIBS)) $(eval $(t)_WHITEBOX := trainer) \
	$(eval $(BUILD)/tests/$(t): LDFLAGS += $$(KCUDA_LDFLAGS)))
all: $(addprefix $(BUILD)/tests/,$(TRAINER_GPU_TESTS))
endif
