# tools/: dataset programs. synth makes a synthetic video-caption (and image-text) dataset;
# prep chunks videos, imports annotations and writes the manifest. Both need libav*.
ifeq ($(HAVE_LIBAV),1)
PROGS += tools/synth
# x264_alloc.c: libx264's memalign, zeroed blocks (its reads past their ends see zeros: the same chunks
# every run); exported, so libx264 binds to it
X264_ALLOC_LDLIBS := -Wl,--export-dynamic-symbol=memalign
tools/synth_SRCS := tools/synth.c tools/synth_scene.c tools/synth_image.c tools/synth_compose.c tools/prep_encode.c \
                    tools/x264_alloc.c
tools/synth_LDLIBS := $(X264_ALLOC_LDLIBS)

PROGS += tools/prep
tools/prep_SRCS := tools/prep.c tools/prep_opts.c tools/prep_annot.c tools/prep_bench.c tools/prep_labels.c tools/prep_json.c tools/prep_chunk.c tools/prep_encode.c \
                   tools/prep_upgrade.c \
                   tools/prep_tar.c tools/prep_info.c tools/prep_damage.c tools/avlog.c tools/x264_alloc.c
tools/prep_LDLIBS := $(X264_ALLOC_LDLIBS)
TESTS += test_x264_alloc
test_x264_alloc_SRCS := tests/test_x264_alloc.c tools/x264_alloc.c
test_x264_alloc_LIBS := common
# libx264 in prep and synth binds to that memalign (the dynamic linker's bindings while each encodes)
SCRIPT_TESTS += tests/test_x264_alloc_bound.sh
# libav's messages through the logger, one line per kind and a count (tools/avlog.c)
TESTS += test_avlog
test_avlog_SRCS := tests/test_avlog.c tools/avlog.c
test_avlog_LIBS := common
SCRIPT_TESTS += tests/test_prep_libav_log.sh
# progress and ETA inside one long video
SCRIPT_TESTS += tests/test_prep_eta.sh
# chunk folders named after the video id; an earlier layout is reused
SCRIPT_TESTS += tests/test_prep_chunk_folders.sh
# a damaged image in a shard is reported and left out (--no-check-images: indexed)
SCRIPT_TESTS += tests/test_prep_shards_damaged.sh
# a zeroed 4 KB block inside H.264 slice data, which libavcodec decodes without an error or flag:
# the loader's decode paths refuse the clips over it; prep reports the video damaged (exit 3) and
# --verify --deep finds it in a chunk
TESTS += test_loader_zeroed_block
SCRIPT_TESTS += tests/test_prep_zeroed_block.sh tests/test_prep_damaged.sh
# a video id naming one of prep's outputs costs that video at most, never the run
SCRIPT_TESTS += tests/test_prep_id_collision.sh

TESTS += test_synth_heldout
test_synth_heldout_SRCS := tests/test_synth_heldout.c tools/synth_scene.c
SCRIPT_TESTS += tests/test_synth_deterministic.sh tests/test_synth_hard_images.sh tests/test_synth_labels.sh
# the compose world's image scenes: captions true under crops, the held-out types (bench-learn's data)
TESTS += test_synth_compose
test_synth_compose_SRCS := tests/test_synth_compose.c tools/synth_compose.c tools/synth_scene.c
SCRIPT_TESTS += tests/test_synth_compose_images.sh

TESTS += test_prep_chunk_frames
test_prep_chunk_frames_SRCS := tests/test_prep_chunk_frames.c tools/prep_chunk.c tools/prep_encode.c tools/prep_damage.c
TESTS += test_prep_any_input
test_prep_any_input_SRCS := tests/test_prep_any_input.c tools/prep_chunk.c tools/prep_encode.c tools/prep_damage.c
TESTS += test_prep_annot
test_prep_annot_SRCS := tests/test_prep_annot.c tools/prep_annot.c tools/prep_bench.c tools/prep_json.c
# labelled annotation files (ek100-train, labels-csv, kinetics): labels, heads, and each refusal
TESTS += test_prep_labels
test_prep_labels_SRCS := tests/test_prep_labels.c tools/prep_labels.c tools/prep_annot.c tools/prep_json.c
# labels end to end: labels-csv -> prep -> loaderd -> ring -> ingest, at 1 and 3 loader threads
SCRIPT_TESTS += tests/test_prep_labels_e2e.sh
TESTS += test_prep_tar
test_prep_tar_SRCS := tests/test_prep_tar.c tools/prep_tar.c tools/prep_annot.c tools/prep_json.c
SCRIPT_TESTS += tests/test_prep_pipeline.sh tests/test_prep_bad_input.sh tests/test_prep_heldout_split.sh
SCRIPT_TESTS += tests/test_prep_special_tokens.sh
SCRIPT_TESTS += tests/test_prep_tiny_captions.sh
# --context N: the captions' token count (a model of --ctx-len N evaluates on it)
SCRIPT_TESTS += tests/test_prep_context.sh
TESTS += test_prep_upgrade
test_prep_upgrade_SRCS := tests/test_prep_upgrade.c tools/prep_upgrade.c

# the data half of the demo, from nothing: synthetic videos -> chunks + manifests, verified
DEMO_DATA := $(BUILD)/demo-data
.PHONY: demo-data
# (the demo's own dataset, tools/demo-data.sh, so that make demo and make demo-data make one thing)
demo-data: tools/synth tools/prep
	bash tools/demo-data.sh $(DEMO_DATA)
	tools/prep --verify $(DEMO_DATA)/train/manifest --deep
	tools/prep --verify $(DEMO_DATA)/heldout/manifest --deep
	tools/prep --info $(DEMO_DATA)/train/manifest
endif
# a wrong input path stops prep before it makes any folder
SCRIPT_TESTS += tests/test_prep_bad_paths.sh tests/test_inputs_fifo.sh
