# common/ data side: CLIP BPE tokenizer (load, tokenize, train) and the dataset manifest.
# Plain C, no optional dependency: the loader and trainer read manifests everywhere.
LIBS += data
data_SRCS := common/bpe_text.c common/bpe_tokenizer.c common/bpe_train.c \
             common/manifest_crc.c common/manifest_writer.c common/manifest_reader.c

TESTS += test_bpe_tokenize test_bpe_reference test_bpe_load_errors test_bpe_train
TESTS += test_manifest_roundtrip test_manifest_errors
