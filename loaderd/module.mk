# loaderd/: the loader. libloader = the read/decode/crop path with no ring in it (used by
# the daemon, tools/clipdump and tests); loaderd/loaderd = the daemon around it.
ifeq ($(HAVE_LIBAV),1)
LIBS += loader
loader_SRCS := loaderd/ld_error.c loaderd/ld_avio.c loaderd/ld_decode.c loaderd/ld_plan.c loaderd/ld_clip.c
endif

# test/benchmark data (synthetic chunks, image shards, manifests); linked only by tests
ifeq ($(HAVE_LIBAV),1)
LIBS += loaderfix
loaderfix_SRCS := loaderd/ld_fixture.c
endif

ifeq ($(HAVE_LIBAV),1)
TESTS += test_loader_crop_psnr test_loader_badinput test_loader_determinism
endif
