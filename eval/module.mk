# eval/: what tools/eval and the trainer's in-process evaluation share, behind one header (eval.h):
# the forward of one fixed block of samples (eval_block.c), retrieval and classification metrics on
# similarity matrices (eval_metrics.c, the benchmarks' own in eval_metrics_bench.c), and the report
# of an evaluation from features (eval_report.c). It sits on the model (the block's forward) and
# the manifest.
PUBLIC_HEADERS += eval/eval.h
USES_eval := model kernels data stream common
LIBS += eval
eval_SRCS := eval/eval_block.c eval/eval_metrics.c eval/eval_metrics_bench.c eval/eval_report.c eval/eval_probe.c eval/eval_cls.c

TESTS += test_eval_metrics test_eval_metrics_bench
test_eval_metrics_LIBS := eval data common
test_eval_metrics_bench_LIBS := eval common
SCRIPT_TESTS += tests/test_eval_metrics_ref.sh
# the linear probe (a separable problem solved, a stationary fit, the same bits on 1 and 2 threads)
# and a head's accuracy with its confusion summary; scikit-learn's LogisticRegression as the reference
TESTS += test_eval_probe
test_eval_probe_LIBS := eval common
SCRIPT_TESTS += tests/test_eval_probe_ref.sh
