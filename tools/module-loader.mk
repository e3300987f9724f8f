# tools/clipdump: PNG contact sheets of clips from a live ring or rendered from a manifest.
ifeq ($(HAVE_LIBAV),1)
PROGS += tools/clipdump
tools/clipdump_SRCS := tools/clipdump.c tools/clipdump_sheet.c
tools/clipdump_LIBS := loader stream data ring aveval avmodel kernels avtext common
endif
