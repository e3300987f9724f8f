# tools/eval (issue 7): zero-shot retrieval and classification of a checkpoint on a held-out
# manifest. libtools holds the logic: loading the model, embedding a manifest by decoding in
# process through loaderd's library (libav), relevance and class inputs; the metrics and the
# report are eval/'s (libeval).
tools_SRCS += tools/eval_model.c

# tools/export (issue 14): a checkpoint as open_clip-named safetensors with every size in the metadata
PROGS += tools/export
tools/export_SRCS := tools/export.c
tools/export_LIBS := tools model kernels stream common
TESTS += test_export_roundtrip
test_export_roundtrip_LIBS := tools model kernels stream common
# exported weights in PyTorch (the twin) and in open_clip with strict=True; skips without torch
SCRIPT_TESTS += tests/test_export_openclip.sh

ifeq ($(HAVE_LIBAV),1)
tools_SRCS += tools/eval_embed.c tools/eval_input.c tools/eval_run.c tools/eval_bench_run.c tools/eval_bench_report.c
tools_SRCS += tools/eval_cls.c tools/eval_cls_report.c
PROGS += tools/eval
tools/eval_SRCS := tools/eval.c tools/avlog.c
tools/eval_LIBS := tools eval model kernels loaderd stream data common

TESTS += test_eval_ckpt test_eval_input test_eval_embed test_eval_nonfinite test_eval_views
test_eval_embed_LIBS := tools eval model kernels loaderd loaderfix augmentref stream data common
test_eval_nonfinite_LIBS := $(test_eval_embed_LIBS)
test_eval_views_LIBS := $(test_eval_embed_LIBS)
test_eval_ckpt_LIBS := tools model kernels stream common
test_eval_input_LIBS := tools eval common
SCRIPT_TESTS += tests/test_eval_e2e.sh tests/test_eval_trainer.sh tests/test_eval_weights_meta.sh
SCRIPT_TESTS += tests/test_eval_bpe_line.sh
# a damaged held-out video is skipped and counted (--strict: it stops the evaluation)
SCRIPT_TESTS += tests/test_eval_damaged.sh
# a chunk replaced by a FIFO blocks none of prep --verify, eval, clipdump --manifest
SCRIPT_TESTS += tests/test_tools_fifo_chunk.sh
endif

# the egocentric zero-shot benchmarks' files (issue 28): readers shared by eval and prep's importers
BENCH_READER_SRCS := tools/eval_bench_util.c tools/eval_bench_ek100.c tools/eval_bench_charades.c \
                     tools/eval_bench_egtea.c tools/eval_bench_egomcq.c tools/eval_bench_ek100cls.c
tools_SRCS += $(BENCH_READER_SRCS)
TESTS += test_eval_bench_read
test_eval_bench_read_LIBS := tools eval common
# tools/ek100_relevancy.py: the official relevancy pickle to the relevance text (skips without numpy)
SCRIPT_TESTS += tests/test_ek100_relevancy.sh
# tools/eval --task ek100-mir|charades-ego|egtea|egomcq on synth: oracles, chance bounds, bad files
ifeq ($(HAVE_LIBAV),1)
SCRIPT_TESTS += tests/test_eval_bench.sh
# tools/eval --task probe on synth's labelled clips: self-consistency, views, refusals
SCRIPT_TESTS += tests/test_eval_probe_e2e.sh
endif
