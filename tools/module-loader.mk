# tools/clipdump: PNG contact sheets of clips from a live ring or rendered from a manifest.
ifeq ($(HAVE_LIBAV),1)
PROGS += tools/clipdump
tools/clipdump_SRCS := tools/clipdump.c tools/clipdump_sheet.c tools/clipdump_mae.c tools/avlog.c
tools/clipdump_LIBS := loaderd stream data shm-layout tools model kernels tools common
# what a newcomer meets: --out made, video id and time range, enlarged frames, errors on the console
SCRIPT_TESTS += tests/test_clipdump_console.sh
SCRIPT_TESTS += tests/test_clipdump_vocab.sh
endif
