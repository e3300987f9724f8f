# tools/eval (issue 7): zero-shot retrieval and classification of a checkpoint on a held-out
# manifest. Library aveval holds the logic (the trainer can call it in-process); the metrics
# need nothing optional, embedding a manifest needs the loader's decode path (libav).
LIBS += aveval
aveval_SRCS := tools/eval_metrics.c

TESTS += test_eval_metrics
test_eval_metrics_LIBS := aveval common
