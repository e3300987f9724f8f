#!/usr/bin/env bash
# The linear probe (eval/eval_probe.c) against scikit-learn's LogisticRegression on random cases
# (tests/ref/eval_probe_ref.py): the same probabilities for every row. Needs numpy and scikit-learn in
# $AVCLIP_PYTHON (or python3): skips (77) without them, also under AVCLIP_REQUIRE_INTEROP (the interop
# venv does not pin scikit-learn).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
bin=$BUILD/tests/test_eval_probe
[ -x "$bin" ] || { echo "skip: $bin is not built"; exit 77; }
py=
for p in ${AVCLIP_PYTHON:-} python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy, sklearn' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "skip: no Python with numpy and scikit-learn (set AVCLIP_PYTHON)"; exit 77; }
d=$(mktemp -d /tmp/test_eval_probe_ref.XXXXXX)
trap 'rm -rf "$d"' EXIT
"$py" tests/ref/eval_probe_ref.py gen 1 "$d/cases" "$d/ref" || { echo "FAIL: the reference"; exit 1; }
"$bin" --dump "$d/cases" >"$d/out" || { echo "FAIL: $bin --dump"; exit 1; }
"$py" tests/ref/eval_probe_ref.py compare "$d/ref" "$d/out"
