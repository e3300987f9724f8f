"""scikit-learn's LogisticRegression as the reference of tools/eval's linear probe (eval/eval_probe.c),
written from the probe's documented definition, not from the C: features standardised over the
labelled rows (mean 0, population standard deviation 1; a constant feature stays 0), the mean
cross-entropy plus (l2/2)|W|^2 on the standardised weights with free biases, which is
LogisticRegression(C = 1 / (l2 * labelled rows)), multinomial (3 classes or more; scikit-learn fits
two classes as one binary model, whose penalty differs). A class without a labelled row is not
fitted (scikit-learn does not know it): its probability is 0.

  eval_probe_ref.py gen SEED CASES REF   random cases (overlapping classes, unlabelled rows, a constant feature)
  eval_probe_ref.py compare REF OUT      OUT (test_eval_probe --dump CASES) against REF
"""
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression

TOL = 1e-5  # probabilities: both fits stop at a gradient of ~1e-8 to 1e-9; the C side stores float weights


def gen(seed, cases_path, ref_path):
    rng = np.random.default_rng(seed)
    with open(cases_path, "w") as cases, open(ref_path, "w") as ref:
        for _ in range(6):
            n, d, k = int(rng.integers(40, 160)), int(rng.integers(2, 12)), int(rng.integers(3, 7))
            l2 = float(10.0 ** rng.uniform(-3, 0))
            centres = rng.normal(size=(k, d)) * rng.uniform(0.3, 2.0)
            y = np.arange(n) % k
            x = centres[y] + rng.normal(size=(n, d)) + rng.normal(size=d) * 5
            x[:, 0] = 2.5 if rng.random() < 0.5 else x[:, 0]  # sometimes a constant feature
            y[rng.random(n) < 0.1] = -1  # unlabelled rows: left out of the fit
            x = x.astype(np.float32)
            gap = int(rng.integers(0, k + 1)) if rng.random() < 0.5 else -1  # sometimes a class without rows
            kd = k + (gap >= 0)
            yd = np.where((y >= 0) & (gap >= 0) & (y >= gap), y + 1, y)
            cases.write(f"case {n} {d} {kd} {l2!r}\n")
            for i in range(n):
                cases.write(f"{yd[i]} " + " ".join(repr(float(v)) for v in x[i]) + "\n")
            lab = y >= 0
            xl = x[lab].astype(np.float64)
            mu = xl.mean(axis=0)
            sd = xl.std(axis=0)
            sd[sd <= 1e-12 * (1 + np.abs(mu))] = 1
            z = (x.astype(np.float64) - mu) / sd
            m = LogisticRegression(C=1.0 / (l2 * lab.sum()), tol=1e-9, max_iter=10000)
            m.fit(z[lab], y[lab])
            assert list(m.classes_) == list(range(k))
            p = m.predict_proba(z)
            if gap >= 0:  # the class no row has: probability 0 (the C probe never predicts it)
                p = np.insert(p, gap, 0.0, axis=1)
            ref.write(f"case {n} {kd}\n")
            for i in range(n):
                ref.write(" ".join(repr(float(v)) for v in p[i]) + "\n")


def compare(ref_path, out_path):
    ref = [line.split() for line in open(ref_path)]
    out = [line.split() for line in open(out_path)]
    bad, worst, rows, i, j = 0, 0.0, 0, 0, 0
    while i < len(ref):
        n, k = int(ref[i][1]), int(ref[i][2])
        assert out[j][0] == "fit", out[j]
        # converged to the tolerance, or stopped where f no longer falls in double (the line search's
        # stall) with a gradient at that floor
        if out[j][2] != "1" and float(out[j][4]) > 1e-6:
            print(f"FAIL: case at line {i + 1}: the C fit stopped far from the optimum ({out[j]})")
            bad += 1
        for r in range(n):
            a = np.array(ref[i + 1 + r], dtype=float)
            b = np.array(out[j + 1 + r], dtype=float)
            assert len(a) == k and len(b) == k, (len(a), len(b), k)
            err = float(np.max(np.abs(a - b)))
            worst = max(worst, err)
            if err > TOL:
                bad += 1
                if bad < 5:
                    print(f"FAIL: case at line {i + 1}, row {r}: reference {a}, C {b}")
        rows += n
        i += 1 + n
        j += 1 + n
    print(f"probe vs scikit-learn: {rows} rows' probabilities, largest difference {worst:.2e} (tolerance {TOL:g})")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        sys.exit(compare(sys.argv[2], sys.argv[3]))
