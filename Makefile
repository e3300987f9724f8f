# Top-level build: detects dependencies, builds every library, program and test this
# machine can build, and runs the tests. `make help` lists the targets.
#
# Each source folder describes itself in a */module*.mk fragment (see mk/README.md):
#   LIBS += name              name_SRCS, name_CU_SRCS -> $(BUILD)/lib/libname.a
#   TEST_LIBS += name         likewise, linked only by programs that name it in _LIBS (tests)
#   PROGS += dir/prog         dir/prog_SRCS, dir/prog_LIBS, dir/prog_LDLIBS -> dir/prog
#   TESTS += test_x           tests/test_x.c (or test_x_SRCS), test_x_LIBS, test_x_LDLIBS
#   GPU_TESTS, SAN_TESTS, BENCHES likewise; SCRIPT_TESTS += tests/test_y.sh
#   GPU_SANITIZE_TESTS += test_z_gpu  also run under compute-sanitizer by tools/gpu-check.sh
#   ASAN_TESTS += test_x      also run under AddressSanitizer+UBSan (not TSan) by make test-san
# Sources by suffix: .c (gcc), .cpp (g++), .cu in _SRCS (g++ for the CPU execution shim, objects
# under $(BUILD)/obj/emu/), .cu in _CU_SRCS (nvcc, with a ptxas resource report next to each object).

BUILD ?= build
SAN ?=
CC := gcc
CFLAGS_WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CFLAGS := -std=gnu11 -O2 -g -pthread -fno-strict-aliasing $(CFLAGS_WARN) -MMD -MP $(EXTRA_CFLAGS)
LDFLAGS := -pthread $(EXTRA_LDFLAGS)
LDLIBS_BASE := -lm -lrt
CXXFLAGS_WARN := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
# the execution shim: .cu files compiled as C++ for the CPU (kernels/cuda/emu/README.md)
EMU_CXXFLAGS = -std=c++17 -O2 -g -pthread -fno-strict-aliasing $(CXXFLAGS_WARN) -MMD -MP -DKEMU=1 \
               $(CUDA_EMU_CFLAGS) -Ikernels/cuda $(EXTRA_CXXFLAGS)
NVCCFLAGS := -O2 -g -lineinfo -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -MMD -MP \
             -Ikernels -Ikernels/cuda $(EXTRA_NVCCFLAGS)
# Ampere (A100 sm_80, RTX 30xx sm_86), Ada (RTX 40xx sm_89), Hopper (H100/H200 sm_90), and sm_90
# PTX so that newer GPUs can JIT-compile the kernels
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 \
             -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90

ifeq ($(SAN),address)
  CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  EMU_CXXFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=address,undefined
else ifeq ($(SAN),thread)
  CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=thread
endif
# a sanitizer build puts its programs into a mirror of the source tree ($(BUILD)/root, made by
# mk/mirror.sh), so the whole test suite runs against them from there by the usual paths
PROG_ROOT := $(if $(SAN),$(BUILD)/root/)

.DEFAULT_GOAL := all
CONFIG := $(BUILD)/config.mk

# (re)detected whenever it is missing; `make config` forces it. DETECT is the detection command
# (tests/test_deps_first.sh puts a stand-in there).
DETECT ?= bash mk/detect.sh
$(CONFIG): mk/detect.sh
	@mkdir -p $(BUILD)
	@CC=$(CC) $(DETECT) $@

ifeq ($(filter help deps deps-auto clean distclean test-fresh print-debian-pkgs,$(MAKECMDGOALS)),)
  include $(CONFIG)
  # One build tree, one sanitizer: $(BUILD)/san records the SAN its objects were compiled with,
  # and a make with another SAN stops, since it would link sanitized and plain objects together
  # (a make run from inside a test of make test-san must pass the same SAN=)
  SAN_STAMP := $(BUILD)/san
  ifneq ($(wildcard $(SAN_STAMP)),)
    ifneq ($(strip $(file <$(SAN_STAMP))),$(SAN))
      san_was = $(if $(strip $(file <$(SAN_STAMP))),with SAN=$(strip $(file <$(SAN_STAMP))),without a sanitizer (SAN=))
      $(error $(BUILD) was built $(san_was), this make has SAN=$(SAN): run it with the same SAN (or another BUILD=, or make clean))
    endif
  else
    $(shell mkdir -p $(BUILD))
    $(file >$(SAN_STAMP),$(SAN))
  endif
endif

# Packages first. The goals that build (all, demo, test, test-san) install missing Debian
# packages before anything else when they can (root with apt-get): when the configuration says
# packages are missing, this make reads no module fragment (a fragment may stop the parse when a
# package it requires is missing), runs deps-auto (installs, detects again) and then the same
# goals in a fresh make that reads the new configuration. DEPS_DONE=1 marks that make and every
# make under it, so a package that stays missing is reported once by its fragment, never looped on.
DEPS_GOALS := all demo test test-san
deps_goals := $(or $(MAKECMDGOALS),all)
DEPS_FIRST :=
ifeq ($(DEPS_DONE)$(filter-out $(DEPS_GOALS),$(deps_goals)),)
  ifneq ($(strip $(DEPS_MISSING)),)
    ifeq ($(shell id -u),0)
      ifneq ($(shell command -v apt-get),)
        DEPS_FIRST := 1
      endif
    endif
  endif
endif

LIBS :=
TEST_LIBS :=
PROGS :=
TESTS :=
SCRIPT_TESTS :=
GPU_TESTS :=
GPU_SANITIZE_TESTS :=
SAN_TESTS :=
ASAN_TESTS :=
BENCHES :=
PUBLIC_HEADERS :=
TEST_HEADERS :=
# procps: pgrep and ps, with which the launch tests look for processes a job left behind
DEBIAN_PKGS := build-essential pkg-config libopenblas-dev libnuma-dev liburing-dev \
               libavformat-dev libavcodec-dev libswscale-dev libavutil-dev procps
ifeq ($(DEPS_FIRST),1)
# every goal waits for the packages; then one fresh make runs them all (see "Packages first");
# deps-first is no file, so it and the goals after it always run
deps-first:
	@echo "make: missing Debian packages ($(strip $(DEPS_MISSING))): installing them first (make deps)"
	@$(MAKE) --no-print-directory deps-auto
	@$(MAKE) --no-print-directory DEPS_DONE=1 $(deps_goals)
$(deps_goals): deps-first
	@:
else
include $(sort $(wildcard */module*.mk */*/module*.mk))

# ---- include paths ---------------------------------------------------------------
# A folder sees its own headers and the public headers of the folders it uses; nothing sees a
# folder's private headers but the folder itself (and its white-box tests). Fragments list their
# public headers (PUBLIC_HEADERS += dir/x.h, linked into $(BUILD)/include/dir/) and what a folder
# uses (USES_dir := ...); arrows point down: tools -> trainer, loaderd -> model, kernels, shm-layout,
# common (tests/test_include_layers.sh checks the sources). Tests see every public header, the
# test helpers (TEST_HEADERS, $(BUILD)/include-test/), tests/ and tests/ref, plus the private
# headers of the folders named in their NAME_WHITEBOX (a test of a folder's internals).
PUB_HEADER_LINKS := $(addprefix $(BUILD)/include/,$(PUBLIC_HEADERS))
PUB_LINKS := $(PUB_HEADER_LINKS) $(addprefix $(BUILD)/include-test/,$(notdir $(TEST_HEADERS)))
PUB_DIRS := $(sort $(patsubst %/,%,$(dir $(PUBLIC_HEADERS))))
inc_of = -I$(1) $(foreach d,$(USES_$(1)),-I$(BUILD)/include/$(d))
$(foreach d,$(PUB_DIRS) $(INC_DIRS),$(eval $(BUILD)/obj/$(d)/%.o: INC = $$(call inc_of,$(d))))
TEST_INC = -Itests -Itests/ref $(foreach d,$(PUB_DIRS),-I$(BUILD)/include/$(d)) -I$(BUILD)/include-test
$(BUILD)/obj/tests/%.o: INC = $(TEST_INC)
$(BUILD)/obj/tests/ref/%.o: INC = $(TEST_INC)
$(foreach t,$(TESTS) $(GPU_TESTS) $(BENCHES),$(if $($(t)_WHITEBOX),\
	$(eval $(BUILD)/obj/tests/$(t).o: INC = $$(TEST_INC) $(addprefix -I,$($(t)_WHITEBOX)))))

# a static pattern: only the headers PUBLIC_HEADERS names get a link rule, so a link an old build's
# dependency files still name (a header since folded into another) is a missing prerequisite that
# makes its object rebuild, not a rule that stops the build for want of the old header
$(PUB_HEADER_LINKS): $(BUILD)/include/%.h: %.h
	@mkdir -p $(dir $@)
	@ln -sfn $(abspath $<) $@
define TEST_HEADER_template
$(BUILD)/include-test/$(notdir $(1)): $(1)
	@mkdir -p $$(dir $$@)
	@ln -sfn $$(abspath $$<) $$@
endef
$(foreach h,$(TEST_HEADERS),$(eval $(call TEST_HEADER_template,$(h))))
# the links are made by pattern rules but are no intermediate files: make must not delete them
.SECONDARY: $(PUB_LINKS)
SCRIPT_TESTS += tests/test_include_layers.sh
# the README links every page of docs/ and every link resolves
SCRIPT_TESTS += tests/test_docs_links.sh

# external libraries every program may link (static archives pull only what is used)
EXT_LDLIBS := $(if $(filter 1,$(HAVE_NUMA)),$(NUMA_LIBS)) $(if $(filter 1,$(HAVE_URING)),$(URING_LIBS)) \
              $(if $(filter 1,$(HAVE_LIBAV)),$(LIBAV_LIBS)) $(if $(filter 1,$(HAVE_BLAS)),$(BLAS_LIBS)) \
              $(if $(filter 1,$(HAVE_OPENMP)),$(OPENMP_LIBS)) $(UTF8PROC_LIBS) $(ZLIB_LIBS) \
              $(if $(filter 1,$(HAVE_FREETYPE)),$(FREETYPE_LIBS))
CFLAGS += $(foreach d,NUMA URING LIBAV BLAS OPENMP UTF8PROC ZLIB FREETYPE,$(if $(filter 1,$(HAVE_$(d))),$($(d)_CFLAGS) -DHAVE_$(d)=1))

# ---- libraries ----------------------------------------------------------------
src_objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(filter %.c,$(1))) $(patsubst %.cpp,$(BUILD)/obj/%.o,$(filter %.cpp,$(1))) \
           $(patsubst %.cu,$(BUILD)/obj/emu/%.o,$(filter %.cu,$(1)))
# An archive also depends on the list of its objects ($(BUILD)/lib/libNAME.objs, relative to BUILD so
# that BUILD=build/asan and BUILD=/abs/build/asan agree; rewritten only when a fragment changes it): a source added to a library whose object already exists (older
# than the archive) would otherwise never get into it.
define LIB_template
$(1)_OBJS := $$(call src_objs,$$($(1)_SRCS)) \
             $$(if $$(filter 1,$$(HAVE_NVCC)),$$(patsubst %.cu,$(BUILD)/obj/%.cu.o,$$($(1)_CU_SRCS)))
ifneq ($$(file <$(BUILD)/lib/lib$(1).objs),$$(strip $$(patsubst $(BUILD)/%,%,$$($(1)_OBJS))))
$$(shell mkdir -p $(BUILD)/lib)
$$(file >$(BUILD)/lib/lib$(1).objs,$$(strip $$(patsubst $(BUILD)/%,%,$$($(1)_OBJS))))
endif
$(BUILD)/lib/lib$(1).a: $$($(1)_OBJS) $(BUILD)/lib/lib$(1).objs
	@mkdir -p $$(dir $$@)
	@rm -f $$@
	ar rcs $$@ $$($(1)_OBJS)
ALL_OBJS += $$($(1)_OBJS)
endef
$(foreach l,$(LIBS) $(TEST_LIBS),$(eval $(call LIB_template,$(l))))
libpaths = $(foreach l,$(1),$(BUILD)/lib/lib$(l).a)
# internal libraries in dependency order (later ones are used by earlier ones)
ALL_LIB_ARCHIVES = $(call libpaths,$(LIBS))

# ---- programs and tests -------------------------------------------------------
# linked to a temporary name and renamed, so a program that is running (a test, a job) is never
# seen half-written while it is rebuilt
define PROG_template
$(1)_OBJS := $$(call src_objs,$$($(1)_SRCS)) $$(patsubst %.cu,$(BUILD)/obj/%.cu.o,$$($(1)_CU_SRCS))
$(2): $$($(1)_OBJS) $$(call libpaths,$$(or $$($(1)_LIBS),$$(LIBS)))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@.tmp $$($(1)_OBJS) -Wl,--start-group $$(call libpaths,$$(or $$($(1)_LIBS),$$(LIBS))) -Wl,--end-group $$($(1)_LDLIBS) $$(EXT_LDLIBS) $$(LDLIBS_BASE)
	@mv -f $$@.tmp $$@
ALL_OBJS += $$($(1)_OBJS)
endef
$(foreach p,$(PROGS),$(eval $(call PROG_template,$(p),$(PROG_ROOT)$(p))))
test_src = $(or $($(1)_SRCS),$(if $($(1)_CU_SRCS),,tests/$(1).c))
$(foreach t,$(TESTS) $(GPU_TESTS) $(BENCHES),$(eval $(t)_SRCS := $(call test_src,$(t))))
$(foreach t,$(TESTS) $(GPU_TESTS) $(BENCHES),$(eval $(call PROG_template,$(t),$(BUILD)/tests/$(t))))

$(BUILD)/obj/%.o: %.c $(CONFIG) | $(PUB_LINKS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -c -o $@ $<

$(BUILD)/obj/%.o: %.cpp $(CONFIG)
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_CXXFLAGS) -c -o $@ $<

$(BUILD)/obj/emu/%.o: %.cu $(CONFIG)
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_CXXFLAGS) -x c++ -c -o $@ $<

# ptxas's resource report of every kernel goes to OBJECT.ptxas (tests/test_cuda_spills.sh reads
# it); anything else the compiler says is shown
$(BUILD)/obj/%.cu.o: %.cu $(CONFIG)
	@mkdir -p $(dir $@)
	@echo "# arch: $(CUDA_ARCH)" >$@.ptxas
	$(NVCC) $(NVCCFLAGS) $(CUDA_ARCH) -Xptxas -v -c -o $@ $< 2>>$@.ptxas || { cat $@.ptxas >&2; rm -f $@; exit 1; }
	@grep -v -e '^#' -e '^ptxas info' -e '^    [0-9]* bytes stack frame' $@.ptxas >&2 || true

-include $(ALL_OBJS:.o=.d)

# ---- top-level targets ----------------------------------------------------------
.PHONY: all config deps deps-auto check test test-fresh print-debian-pkgs test-seeds test-gpu list-gpu-sanitize-tests test-san help clean distclean demo demo-ring demo-finetune demo-mae

all: $(call libpaths,$(LIBS)) $(addprefix $(PROG_ROOT),$(PROGS)) $(addprefix $(BUILD)/tests/,$(TESTS) $(BENCHES))

config:
	@rm -f $(CONFIG)
	@$(MAKE) --no-print-directory $(CONFIG)

# installs the Debian packages the project needs; idempotent
deps:
	@if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root (or: sudo make deps)"; exit 1; fi
	@missing=$$(for p in $(DEBIAN_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "make deps: all packages present"; else \
	  echo "make deps: installing" $$missing; \
	  export DEBIAN_FRONTEND=noninteractive; mkdir -p $(BUILD); log=$(BUILD)/deps.log; : >$$log; \
	  (apt-get install -y -q --no-install-recommends $$missing >>$$log 2>&1 || \
	   (echo "make deps: updating the package lists (apt-get update)"; apt-get update -q >>$$log 2>&1 && \
	    apt-get install -y -q --no-install-recommends $$missing >>$$log 2>&1)) || \
	  { tail -n 20 $$log; echo "make deps: apt-get failed (whole log: $$log)"; exit 1; }; \
	  echo "make deps: installed" $$missing; fi
	@rm -f $(CONFIG)

# run by `make test`: install missing packages when we can, so a fresh machine works
deps-auto: $(CONFIG)
	@. /dev/null; missing=$$(sed -n 's/^DEPS_MISSING := //p' $(CONFIG)); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then $(MAKE) --no-print-directory deps && $(MAKE) --no-print-directory $(CONFIG); \
	  else echo "note: missing packages ($$missing); run 'sudo make deps' to build everything"; fi; fi

TEST_TIMEOUT ?= 300
check: all $(SCRIPT_TESTS)
	@BUILD=$(BUILD) TEST_TIMEOUT=$(TEST_TIMEOUT) bash tests/run.sh $(addprefix $(BUILD)/tests/,$(TESTS)) $(SCRIPT_TESTS)

test:
	@$(MAKE) --no-print-directory deps-auto
	@$(MAKE) --no-print-directory check

# The randomized kernel tests (tests/test_seed.h) run on a fixed seed each in make test, so a
# verdict never depends on the run; this runs them SEED_RUNS times on fresh seeds (a failure
# prints the KT_SEED that repeats it)
SEED_RUNS ?= 5
# and the tests that run through the CUDA shim's asynchronous streams on fresh schedule seeds
# (ASYNC_SEED_RUNS, KEMU_SCHED_SEED=random: each test's log names the seed that repeats it)
test-seeds: $(addprefix $(BUILD)/tests/,$(SEEDED_TESTS)) $(ASYNC_SEED_DEPS)
	@for i in $$(seq $(SEED_RUNS)); do echo "-- test-seeds: round $$i of $(SEED_RUNS)"; \
	  KT_SEED=random BUILD=$(BUILD) TEST_TIMEOUT=$(TEST_TIMEOUT) bash tests/run.sh $(addprefix $(BUILD)/tests/,$(SEEDED_TESTS)) || exit 1; \
	  $(if $(ASYNC_SEED_RUNS),KEMU_SCHED_SEED=random BUILD=$(BUILD) TEST_TIMEOUT=$(TEST_TIMEOUT) bash tests/run.sh $(ASYNC_SEED_RUNS) || exit 1;) done

test-gpu: all $(addprefix $(BUILD)/tests/,$(GPU_TESTS))
	@BUILD=$(BUILD) TEST_TIMEOUT=$(TEST_TIMEOUT) bash tests/run.sh $(addprefix $(BUILD)/tests/,$(GPU_TESTS))

# for tools/gpu-check.sh: the device tests that compute-sanitizer checks
list-gpu-sanitize-tests:
	@echo $(addprefix $(BUILD)/tests/,$(GPU_SANITIZE_TESTS))

# The whole suite (every test program and script, and the programs they run; the CPU shim's
# kernel tests among them) under AddressSanitizer+UBSan from a mirror of the tree holding the
# sanitized programs; then the concurrent tests (SAN_TESTS) under ThreadSanitizer (the shim's
# fibers are announced to ASan, not to TSan). Each in its own build tree.
ASAN_DIR := $(abspath $(BUILD)/asan)
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
test-san:
	@$(MAKE) --no-print-directory deps-auto
	@bash mk/mirror.sh "$(CURDIR)" "$(ASAN_DIR)/root" $(PROGS)
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SAN=address all $(addprefix $(BUILD)/asan/tests/,$(ASAN_TESTS))
	@cd "$(ASAN_DIR)/root" && BUILD=$(ASAN_DIR) TEST_TIMEOUT=$(TEST_TIMEOUT) RING_SAN=address $(SAN_ENV) \
	  bash tests/run.sh $(addprefix $(ASAN_DIR)/tests/,$(sort $(TESTS) $(ASAN_TESTS))) $(SCRIPT_TESTS)
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/tsan SAN=thread $(addprefix $(BUILD)/tsan/tests/,$(SAN_TESTS))
	@BUILD=$(BUILD)/tsan TEST_TIMEOUT=$(TEST_TIMEOUT) RING_SAN=thread bash tests/run.sh $(addprefix $(BUILD)/tsan/tests/,$(SAN_TESTS))

demo:
	@$(MAKE) --no-print-directory deps-auto
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) bash tools/demo.sh

# the README's first two commands on a fresh minimal Debian 12 root, as root (mk/test-fresh.sh)
test-fresh:
	@BUILD=$(BUILD) bash mk/test-fresh.sh

# every Debian package a fragment or the Makefile asks make deps for (tests/test_deps_first.sh)
print-debian-pkgs:
	@echo $(sort $(DEBIAN_PKGS))

demo-ring:
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) bash tools/demo-ring.sh

# pretrain, fine-tune on synth's action and shape labels, against a linear probe and chance (issue 28)
demo-finetune:
	@$(MAKE) --no-print-directory deps-auto
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) bash tools/demo-finetune.sh
# VideoMAE pretraining on synth, checked against the per-patch-mean baseline and a random encoder's probe
demo-mae:
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) bash tools/demo-mae.sh

help:
	@echo "make                build everything this machine can (dependency summary first); same as make all"
	@echo "make config         detect dependencies again (writes $(BUILD)/config.mk)"
	@echo "make deps           install the Debian packages (root)"
	@echo "make deps-auto      install missing packages when root (make test, demo and test-san run it)"
	@echo "make test           install missing packages if root, build, run all tests"
	@echo "make check          build and run all tests, without installing packages"
	@echo "make test-fresh     the README's first two commands on a fresh minimal Debian 12 root (root, debootstrap; ~25 min)"
	@echo "make print-debian-pkgs  the Debian packages make deps installs"
	@echo "make format         rewrite every C/C++/CUDA file in the style of .clang-format (clang-format 14)"
	@echo "make test-seeds     the randomized kernel tests on SEED_RUNS (default 5) fresh seeds each, not the fixed ones of make test"
	@echo "make test-san       the whole suite under ASan+UBSan (the CPU kernel shim's tests too), the concurrent tests under TSan"
	@echo "make fuzz           each libFuzzer harness for FUZZ_SECONDS (default 60; needs clang)"
	@echo "make fuzz-build     build the libFuzzer harnesses only (build/fuzz/fuzz_*)"
	@echo "make test-gpu       tests that need a GPU (skip with 77 without one)"
	@echo "make demo           synthesize data, train the tiny model with FastCLIP-v3 on the CPU, evaluate, plot"
	@echo "make demo-data      the data half alone: synthetic videos -> chunks -> verified manifests in $(BUILD)/demo-data"
	@echo "make demo-ring      the ring alone: producers killed at random, consumers check every position"
	@echo "make demo-finetune  pretrain, fine-tune on synth's action labels, compare with a linear probe and chance"
	@echo "make demo-mae       VideoMAE pretraining of the tiny video tower on synth: reconstruction vs baseline, probe vs random"
	@echo "make bench-ring     ring handoff and payload benchmark"
	@echo "make bench-loader   fused vs naive vs decode-only clips/s of the loader"
	@echo "make bench-cpu      CPU step times of tiny and vit-s16, linear layers vs cblas_sgemm"
	@echo "make bench-prep-gop chunk size vs random-access decode work for GOP lengths"
	@echo "make bench-learn    FastCLIP v0-v3 vs OpenCLIP, batch 32/64/128 x 1/4 ranks, 5 seeds, 95% intervals (resumable)"
	@echo "make bench-manifest what opening a 1M-sample manifest costs with and without the data checksum"
	@echo "make gpu-race       our GPU step against the same model in PyTorch (tools/bench/gpu_race.sh; needs a GPU)"
	@echo "make bench-kemu     the CPU kernel shim's speed"
	@echo "make bench-kernels  own CUDA kernels in GB/s and GEMMs in TFLOP/s against copy and cuBLASLt baselines (GPU; without one: bench-plan)"
	@echo "make bench-plan     the kernels of one vit-b16 step (T=4 B=128, T=16 B=32): FLOPs, bytes, H200 floors, predicted step time and MFU (no GPU)"
	@echo "make bench-gpu      the trainer on one GPU (vit-b16, T=4, largest batch; ring kept full and loaderd) against PyTorch, ratio last"
	@echo "make list-gpu-sanitize-tests  the kernel tests tools/gpu-check.sh runs under compute-sanitizer"
	@echo "tools/gpu-check.sh  the whole GPU check in 8 minutes: facts, build, correctness, sanitize, bench-kernels, trainer, torch (--dry-run: the plan)"
	@echo "make install        programs as avclip-* into \$$(DESTDIR)\$$(BINDIR) (/usr/local/bin), units, example env"
	@echo "make install-systemd  the systemd units and the example env file only"
	@echo "make clean          remove $(BUILD) and the programs"
	@echo "make distclean      the same as make clean"
	@echo "make help           this list"

clean:
	rm -rf $(BUILD) $(PROGS)
distclean: clean
endif # DEPS_FIRST
