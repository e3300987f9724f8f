#!/usr/bin/env python3
"""bench-learn's report (tools/bench/learn.sh): held-out retrieval per loss as mean ± half-range
over seeds, then each loss against the baseline (openclip) as the paired per-seed difference of
the same figure: mean difference and its 95% t interval (Student's t, n-1 degrees of freedom),
with how many seeds were paired. Only the Python standard library.
Usage: learn_stats.py RESULTS.jsonl STEPS [BASELINE]"""
import json
import math
import statistics
import sys

# two-sided 95%: t quantile 0.975 for 1..30 degrees of freedom, then 40, 60, 120, and the normal's
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


def t975(df):
    if df <= 30:
        return T975[df - 1]
    return 2.021 if df <= 40 else 2.000 if df <= 60 else 1.980 if df <= 120 else 1.960


def paired(rows, loss, base, match, key):
    """(mean, half-width of the 95% interval, n) of loss - base over the seeds both have"""
    by = {}
    for r in rows:
        if r["match"] == match and r["loss"] in (loss, base):
            by.setdefault(r["seed"], {})[r["loss"]] = 100 * r[key]
    d = [v[loss] - v[base] for v in by.values() if loss in v and base in v]
    if len(d) < 2:
        return (d[0] if d else float("nan")), float("nan"), len(d)
    return statistics.mean(d), t975(len(d) - 1) * statistics.stdev(d) / math.sqrt(len(d)), len(d)


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    steps, base = sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "openclip"
    if not rows:
        sys.exit("bench-learn: no results in " + sys.argv[1])

    def stat(loss, match, key):
        v = [100 * r[key] for r in rows if r["loss"] == loss and r["match"] == match]
        return statistics.mean(v), (max(v) - min(v)) / 2, len(v)

    losses = list(dict.fromkeys(r["loss"] for r in rows))
    n_heldout, batch, world = rows[0]["n"], rows[0].get("batch", 32), rows[0].get("world", "basic")
    print(f"held-out retrieval after {steps} steps, batch {batch}, tiny model, {world} world, {n_heldout} held-out "
          f"clips (mean ± half-range over seeds)")
    for match in ("caption", "instance"):
        chance = next(r for r in rows if r["match"] == match)
        print(f"\nhit = {'any clip with the caption' if match == 'caption' else 'the clip itself'}"
              f" (chance R@1 {100 * chance['chance_r1']:.1f}%, R@5 {100 * chance['chance_r5']:.1f}%)")
        print(f"{'loss':<13} {'t2v R@1':>13} {'t2v R@5':>13} {'v2t R@1':>13} {'v2t R@5':>13} seeds")
        for loss in losses:
            cells = [stat(loss, match, k) for k in ("t2v_r1", "t2v_r5", "v2t_r1", "v2t_r5")]
            print(f"{loss:<13} " + " ".join(f"{m:6.1f} ± {s:4.1f}" for m, s, _ in cells) + f"   {cells[0][2]}")
    others = [loss for loss in losses if loss != base]
    if base in losses and others:
        print(f"\npaired per-seed difference to {base}, points, mean [95% interval] (seeds paired)")
        figs = [("caption", "t2v_r1", "t2v R@1 (caption)"), ("caption", "v2t_r1", "v2t R@1 (caption)"),
                ("instance", "t2v_r1", "t2v R@1 (instance)")]
        print(f"{'loss':<13} " + " ".join(f"{name:>26}" for _, _, name in figs))
        for loss in others:
            cells = []
            for match, key, _ in figs:
                m, h, n = paired(rows, loss, base, match, key)
                cells.append(f"{m:+6.1f} [{m - h:+6.1f}, {m + h:+6.1f}] ({n})" if not math.isnan(h)
                             else f"{m:+6.1f} (no interval: {n} seed)")
            print(f"{loss:<13} " + " ".join(f"{c:>26}" for c in cells))
        print("an interval that holds 0 does not tell the losses apart at these seeds")
    best = {loss: stat(loss, "caption", "t2v_r1")[0] for loss in losses}
    b = best.get(base)
    print("\nbench-learn: t2v R@1 (caption hits) " + ", ".join(f"{k} {v:.1f}%" for k, v in best.items()) +
          (f"; fastclip-v3 / {base} = {best['fastclip-v3'] / b:.2f}" if b and "fastclip-v3" in best else ""))


if __name__ == "__main__":
    main()
