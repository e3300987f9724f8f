# loaderd/: the loader. libloader = the read/decode/crop path with no ring in it (used by
# the daemon, tools/clipdump and tests); loaderd/loaderd = the daemon around it.
ifeq ($(HAVE_LIBAV),1)
LIBS += loader
loader_SRCS := loaderd/ld_error.c loaderd/ld_avio.c loaderd/ld_decode.c loaderd/ld_plan.c loaderd/ld_clip.c \
               loaderd/ld_io.c

PROGS += loaderd/loaderd
loaderd/loaderd_SRCS := loaderd/loaderd.c loaderd/ld_config.c loaderd/ld_worker.c
loaderd/loaderd_LIBS := loader stream data ring common
endif

# test/benchmark data (synthetic chunks, image shards, manifests); linked only by tests
ifeq ($(HAVE_LIBAV),1)
LIBS += loaderfix
loaderfix_SRCS := loaderd/ld_fixture.c
endif

ifeq ($(HAVE_LIBAV),1)
TESTS += test_loader_crop_psnr test_loader_badinput test_loader_determinism test_loader_daemon_kill \
         test_loader_daemon_reattach test_loader_daemon_pread test_loader_io test_loader_clipdump
endif

ifeq ($(HAVE_LIBAV),1)
BENCHES += bench_loader
endif
.PHONY: bench-loader
bench-loader: $(BUILD)/tests/bench_loader
	$(BUILD)/tests/bench_loader $(BENCH_LOADER_DIR)
