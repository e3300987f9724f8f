# common/ evaluation side: retrieval and classification metrics on similarity matrices, and the
# report of an evaluation from features (shared by tools/eval and the trainer's in-process eval).
LIBS += evalscore
evalscore_SRCS := common/eval_metrics.c common/eval_metrics_bench.c common/eval_report.c

TESTS += test_eval_metrics test_eval_metrics_bench
test_eval_metrics_LIBS := evalscore data common
test_eval_metrics_bench_LIBS := evalscore common
SCRIPT_TESTS += tests/test_eval_metrics_ref.sh
