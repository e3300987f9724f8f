# common/ evaluation side: retrieval and classification metrics on similarity matrices, and the
# report of an evaluation from features (shared by tools/eval and the trainer's in-process eval).
LIBS += evalscore
evalscore_SRCS := common/eval_metrics.c common/eval_report.c

TESTS += test_eval_metrics
test_eval_metrics_LIBS := evalscore data common
