# loaderd/: the loader. libloaderd = the read/decode/crop path with no ring in it (used by
# the daemon, tools/clipdump, tools/eval and tests); loaderd/loaderd = the daemon around it.
# Everything here needs libav*; liburing and libnuma are used when detected (pread / no pinning
# otherwise).
# public: one header, loader.h: the decode library's plans, clips, decoder and errors
# (tools/clipdump and tools/eval decode through it), the packet indexer (tools/prep writes the
# index) and the reader (the loader bench drives it); the daemon's config, worker and bench, the
# AVIO glue, the views and the GOP/render internals are private
PUBLIC_HEADERS += loaderd/loader.h
# model for --bench --for (the model presets' FLOPs per clip: one count for the loader and
# the trainer's MFU); its header brings kern_ops.h, so kernels too (DESIGN §2: loaderd -> model, kernels)
USES_loaderd := model kernels shm-layout data stream common
ifeq ($(HAVE_LIBAV),1)
LIBS += loaderd
loaderd_SRCS := loaderd/ld_error.c loaderd/ld_avio.c loaderd/ld_decode.c loaderd/ld_render.c loaderd/ld_packets.c \
               loaderd/ld_gop.c loaderd/ld_split.c loaderd/ld_plan.c loaderd/ld_view.c loaderd/ld_clip.c loaderd/ld_index.c loaderd/ld_io.c \
               loaderd/ld_stall.c

PROGS += loaderd/loaderd
loaderd/loaderd_SRCS := loaderd/loaderd.c loaderd/ld_config.c loaderd/ld_worker.c loaderd/ld_bench.c loaderd/ld_cores.c
loaderd/loaderd_LIBS := loaderd stream data shm-layout model common

# (the test/benchmark data the loader's tests use, libloaderfix, is tests/ld_fixture.c: tests/module.mk)

TESTS += test_loader_crop_psnr test_loader_badinput test_loader_index test_loader_determinism test_loader_io \
         test_loader_views test_loader_daemon_kill test_loader_daemon_reattach test_loader_daemon_pread test_loader_clipdump \
         test_loader_bench test_tools_damaged_inputs test_loader_damaged test_loader_daemon_stop
# clip_decoders 2 (a clip's later GOPs on a second thread): the serial path's bytes and errors
TESTS += test_loader_split
# the indexed path decodes exactly the key, the references up to the last needed frame and the needed frames
TESTS += test_loader_needed_only
# a chunk path that is a FIFO: error slots, no reader blocks
TESTS += test_loader_fifo_chunk
# loaderd --bench --for MODEL@MFU: the cores-per-GPU arithmetic and the flag's errors
TESTS += test_loader_cores
test_loader_cores_SRCS := tests/test_loader_cores.c loaderd/ld_cores.c loaderd/ld_config.c
test_loader_cores_WHITEBOX := loaderd # the daemon's config and --for are not the library's API
# prep --verify --deep checks a chunk's width, height and frame rate against its file
TESTS += test_prep_verify_geometry
# overlapping sections with valid checksums: loaderd, eval, clipdump and prep --verify refuse them
TESTS += test_tools_hostile_manifest
# a loaderd stopped past its watchdog while decoding: no timeout slots; a live hang still times out
TESTS += test_loader_daemon_sigstop test_loader_stall
test_loader_stall_WHITEBOX := loaderd # the stall ticker (ld_stall.h) is the daemon's, not the library's API
test_tools_damaged_inputs_WHITEBOX := shm-layout # damages a ring segment's fields (ring_layout.h)
SCRIPT_TESTS += tests/test_loader_config.sh tests/test_loader_prep_e2e.sh
endif
