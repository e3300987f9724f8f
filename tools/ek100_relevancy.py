#!/usr/bin/env python3
"""Converts EPIC-KITCHENS-100's multi-instance retrieval relevancy matrix (a Python pickle,
caption_relevancy_EPIC_100_retrieval_test.pkl: a numpy array of clips x sentences, rows in the
order of EPIC_100_retrieval_test.csv, columns in that of EPIC_100_retrieval_test_sentence.csv)
into tools/eval's relevance text format:

    avclip-relevance 1 ROWS COLS
    V T R          one line per non-zero entry: clip V, sentence T (0-based), relevance R in (0, 1]

tools/eval --task ek100-mir --relevance OUT reads it. This script is a one-time converter; the
product never imports it and needs no Python.

    python3 tools/ek100_relevancy.py caption_relevancy_EPIC_100_retrieval_test.pkl OUT \\
        [--clips EPIC_100_retrieval_test.csv --sentences EPIC_100_retrieval_test_sentence.csv]

With --clips/--sentences the matrix's shape is checked against the CSVs' record counts. Only
unpickle a file you trust: a pickle can run code when it is loaded.
"""
import argparse
import csv
import pickle
import sys

import numpy as np


def records(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f) if r]
    return len(rows) - 1  # the header


def convert(pkl, out, clips=None, sentences=None):
    with open(pkl, "rb") as f:
        m = pickle.load(f)
    m = np.asarray(m)
    if m.ndim != 2:
        raise ValueError(f"{pkl}: a {m.ndim}-d array, want a 2-d clips x sentences matrix")
    if not np.issubdtype(m.dtype, np.number):
        raise ValueError(f"{pkl}: dtype {m.dtype} is not numeric")
    m = m.astype(np.float64)
    if not np.all(np.isfinite(m)) or m.min() < 0 or m.max() > 1:
        raise ValueError(f"{pkl}: relevances must be finite and in [0, 1] (min {m.min()}, max {m.max()})")
    for path, n, what in ((clips, m.shape[0], "rows"), (sentences, m.shape[1], "columns")):
        if path is not None and records(path) != n:
            raise ValueError(f"{pkl}: {n} {what}, but {path} has {records(path)} records")
    rows, cols = np.nonzero(m)
    with open(out, "w") as f:
        f.write(f"# from {pkl}\navclip-relevance 1 {m.shape[0]} {m.shape[1]}\n")
        for v, t in zip(rows.tolist(), cols.tolist()):
            f.write(f"{v} {t} {float(np.float32(m[v, t]))!r}\n")
    return m.shape, len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pickle")
    ap.add_argument("out")
    ap.add_argument("--clips", help="EPIC_100_retrieval_test.csv (checks the row count)")
    ap.add_argument("--sentences", help="EPIC_100_retrieval_test_sentence.csv (checks the column count)")
    a = ap.parse_args()
    try:
        shape, nnz = convert(a.pickle, a.out, a.clips, a.sentences)
    except (OSError, ValueError, pickle.UnpicklingError) as e:
        print(f"ek100_relevancy.py: {e}", file=sys.stderr)
        return 1
    print(f"{a.out}: {shape[0]} clips x {shape[1]} sentences, {nnz} non-zero relevances")
    return 0


if __name__ == "__main__":
    sys.exit(main())
