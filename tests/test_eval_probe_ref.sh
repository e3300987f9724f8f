#!/usr/bin/env bash
# The linear probe (eval/eval_probe.c) against scikit-learn's LogisticRegression on random cases
# (tests/ref/eval_probe_ref.py): the same probabilities for every row. Needs numpy and scikit-learn in
# $AVCLIP_PYTHON (or python3): skips (77) without them, fails instead under AVCLIP_REQUIRE_INTEROP=1
# (CI: mk/interop-venv.sh adds scikit-learn to its venv).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
bin=$BUILD/tests/test_eval_probe
[ -x "$bin" ] || { echo "skip: $bin is not built"; exit 77; }
. tests/python_env.sh
need_python numpy sklearn
d=$(mktemp -d /tmp/test_eval_probe_ref.XXXXXX)
trap 'rm -rf "$d"' EXIT
"$py" tests/ref/eval_probe_ref.py gen 1 "$d/cases" "$d/ref" || { echo "FAIL: the reference"; exit 1; }
"$bin" --dump "$d/cases" >"$d/out" || { echo "FAIL: $bin --dump"; exit 1; }
"$py" tests/ref/eval_probe_ref.py compare "$d/ref" "$d/out"
