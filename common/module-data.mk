# common/ data side: CLIP BPE tokenizer (load, tokenize, train) and the dataset manifest.
# The tokenizer needs utf8proc (Unicode data: NFC, case, letter/number classes) and zlib (gzipped
# merges files, as open_clip ships them): both are required, `make deps` installs them.
DEBIAN_PKGS += libutf8proc-dev zlib1g-dev
ifeq ($(HAVE_UTF8PROC),0)
$(error libutf8proc-dev is missing or WITH_UTF8PROC=0: the tokenizer needs its Unicode data (run: sudo make deps, or apt-get install libutf8proc-dev))
endif
ifeq ($(HAVE_ZLIB),0)
$(error zlib1g-dev is missing: the tokenizer reads gzipped merges files with it (run: sudo make deps))
endif
LIBS += data
data_SRCS := common/bpe_text.c common/bpe_clean.c common/bpe_ftfy.c common/bpe_tables.c common/bpe_uclass.c common/bpe_tokenizer.c common/bpe_train.c \
             common/manifest_crc.c common/manifest_packets.c common/manifest_writer.c common/manifest_reader.c common/manifest_labels.c \
             common/tar.c

TESTS += test_bpe_tokenize test_bpe_reference test_bpe_load_errors test_bpe_train test_bpe_clip_corpus
TESTS += test_bpe_train_any test_bpe_specials
SCRIPT_TESTS += tests/test_bpe_specials_ref.sh
test_bpe_train_any_LIBS := data common
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
