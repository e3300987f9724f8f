#!/usr/bin/env bash
# tools/ek100_relevancy.py on a tiny pickle it is given here (3 clips x 2 sentences, as the
# fixtures in tests/fixtures/bench): the text it writes, the shape checks against the CSVs, and
# refusals of a 1-d array and of a relevance above 1. Needs numpy: skips (77) without.
set -u
cd "$(dirname "$0")/.."
. tests/python_env.sh
need_python numpy
d=$(mktemp -d /tmp/test_ek100_relevancy.XXXXXX)
trap 'rm -rf "$d"' EXIT
F=tests/fixtures/bench
mk() { "$py" -c "import pickle, sys, numpy as np; pickle.dump(np.array($2, dtype=np.float32), open(sys.argv[1], 'wb'))" "$1"; }
mk "$d/ok.pkl" "[[0, 1], [0.5, 0], [1, 0.25]]"
"$py" tools/ek100_relevancy.py "$d/ok.pkl" "$d/ok.rel" --clips $F/EPIC_100_retrieval_test.csv \
	--sentences $F/EPIC_100_retrieval_test_sentence.csv || { echo "FAIL: the converter refused a good pickle"; exit 1; }
printf 'avclip-relevance 1 3 2\n0 1 1.0\n1 0 0.5\n2 0 1.0\n2 1 0.25\n' >"$d/want"
grep -v '^#' "$d/ok.rel" | diff "$d/want" - || { echo "FAIL: the converter's output differs (< expected)"; exit 1; }
fails() { # fails NEEDLE ARGS...: the converter exits 1 saying NEEDLE
	local needle=$1; shift
	if "$py" tools/ek100_relevancy.py "$@" >"$d/out" 2>&1; then echo "FAIL: accepted $*"; exit 1; fi
	grep -qF -- "$needle" "$d/out" || { echo "FAIL: '$needle' not in: $(cat "$d/out")"; exit 1; }
	echo "ok: $(cat "$d/out")"
}
fails "2 columns, but $F/EPIC_100_retrieval_test.csv has 3 records" "$d/ok.pkl" "$d/x" --sentences $F/EPIC_100_retrieval_test.csv
fails "3 rows, but $F/EPIC_100_retrieval_test_sentence.csv has 2 records" "$d/ok.pkl" "$d/x" --clips $F/EPIC_100_retrieval_test_sentence.csv
mk "$d/flat.pkl" "[0, 1, 0.5]"
fails "a 1-d array" "$d/flat.pkl" "$d/x"
mk "$d/big.pkl" "[[0, 1.5]]"
fails "relevances must be finite and in [0, 1]" "$d/big.pkl" "$d/x"
echo "ek100_relevancy.py: a 3 x 2 pickle converted, shape mismatches and bad values refused"
