#!/usr/bin/env bash
# tools/eval's metrics (EK-100 MIR mAP/nDCG raw and (S+1)/2-rescaled, Charades-Ego mAP, mean-class
# accuracy, EgoMCQ) against the independent numpy references of tests/ref/eval_metrics_ref.py on
# random cases with ties, empty classes and all-zero rows. Needs numpy: skips (77) without.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
bin=$BUILD/tests/test_eval_metrics_bench
[ -x "$bin" ] || { echo "skip: $bin is not built"; exit 77; }
. tests/python_env.sh
need_python numpy
d=$(mktemp -d /tmp/test_eval_metrics_ref.XXXXXX)
trap 'rm -rf "$d"' EXIT
rc=0
for seed in 1 2 3; do
	"$py" tests/ref/eval_metrics_ref.py gen "$seed" "$d/cases" "$d/ref" || { echo "FAIL: the reference (seed $seed)"; exit 1; }
	"$bin" --dump "$d/cases" >"$d/out" || { echo "FAIL: $bin --dump (seed $seed)"; exit 1; }
	"$py" tests/ref/eval_metrics_ref.py compare "$d/ref" "$d/out" || rc=1
done
exit $rc
