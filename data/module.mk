# data/: CLIP BPE tokenizer (load, tokenize, train) and the dataset manifest.
# The tokenizer needs utf8proc (Unicode data: NFC, case, letter/number classes) and zlib (gzipped
# merges files, as open_clip ships them): both are required, `make deps` installs them.
DEBIAN_PKGS += libutf8proc-dev zlib1g-dev
ifeq ($(HAVE_UTF8PROC),0)
$(error libutf8proc-dev is missing or WITH_UTF8PROC=0: the tokenizer needs its Unicode data (run: sudo make deps, or apt-get install libutf8proc-dev))
endif
ifeq ($(HAVE_ZLIB),0)
$(error zlib1g-dev is missing: the tokenizer reads gzipped merges files with it (run: sudo make deps))
endif
PUBLIC_HEADERS += data/bpe.h data/manifest.h data/tar.h
USES_data := common
LIBS += data
data_SRCS := data/bpe_text.c data/bpe_clean.c data/bpe_ftfy.c data/bpe_tables.c data/bpe_uclass.c data/bpe_tokenizer.c data/bpe_train.c \
             data/manifest_packets.c data/manifest_writer.c data/manifest_reader.c data/manifest_labels.c \
             data/tar.c

TESTS += test_bpe_tokenize test_bpe_reference test_bpe_load_errors test_bpe_train test_bpe_clip_corpus
TESTS += test_bpe_train_any test_bpe_specials
SCRIPT_TESTS += tests/test_bpe_specials_ref.sh
test_bpe_train_any_LIBS := data common
test_bpe_clip_corpus_WHITEBOX := data # bpe_clean.h's UTF-8 writer is the tokenizer's own
test_bpe_specials_LIBS := data common
TESTS += test_manifest_roundtrip test_manifest_errors
TESTS += test_manifest_vocab
TESTS += test_manifest_overlap test_manifest_caption_tokens # hostile manifests with valid checksums
# class labels (version 3): round trip, version 2 unchanged, hostile labels sections
TESTS += test_manifest_labels
test_manifest_labels_LIBS := data common
test_manifest_overlap_LIBS := data common
test_manifest_caption_tokens_LIBS := data common
test_manifest_vocab_LIBS := data common

# make bench-manifest: what the data checksum at open costs on a 1M-sample manifest
BENCHES += bench_manifest
bench_manifest_LIBS := data common
.PHONY: bench-manifest
bench-manifest: $(BUILD)/tests/bench_manifest
	$(BUILD)/tests/bench_manifest
