# tools/: dataset programs. synth makes a synthetic video-caption (and image-text) dataset;
# prep chunks videos, imports annotations and writes the manifest. Both need libav*.
ifeq ($(HAVE_LIBAV),1)
PROGS += tools/synth
tools/synth_SRCS := tools/synth.c tools/synth_scene.c tools/synth_image.c tools/prep_encode.c

TESTS += test_synth_heldout
test_synth_heldout_SRCS := tests/test_synth_heldout.c tools/synth_scene.c
SCRIPT_TESTS += tests/test_synth_deterministic.sh
endif
