# eval/: what tools/eval and the trainer's in-process evaluation share, behind one header (eval.h):
# the forward of one fixed block of samples (eval_block.c), retrieval and classification metrics on
# similarity matrices (eval_metrics.c, the benchmarks' own in eval_metrics_bench.c), and the report
# of an evaluation from features (eval_report.c). It sits on the model (the block's forward) and
# the manifest.
PUBLIC_HEADERS += eval/eval.h
USES_eval := model kernels data stream common
LIBS += eval
eval_SRCS := eval/eval_block.c eval/eval_metrics.c eval/eval_metrics_bench.c eval/eval_report.c

TESTS += test_eval_metrics test_eval_metrics_bench
test_eval_metrics_LIBS := eval data common
test_eval_metrics_bench_LIBS := eval common
SCRIPT_TESTS += tests/test_eval_metrics_ref.sh
