#!/usr/bin/env python3
"""bench-learn's report (tools/bench/learn.sh): for each cell (global batch x ranks), held-out
retrieval of each loss as the mean over seeds with its 95% Student-t interval, then each loss
against the baseline (openclip) as the paired per-seed difference (the same seed: the same data
order and initial weights on both sides) with its 95% t interval; the last line sums up
fastclip-v3 against openclip in every cell. --markdown FILE also writes the table as Markdown.
Only the Python standard library.
Usage: learn_stats.py RESULTS.jsonl [--markdown FILE] [--baseline LOSS]"""
import argparse
import json
import math
import statistics

# two-sided 95%: t quantile 0.975 for 1..30 degrees of freedom, then 40, 60, 120, and the normal's
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]
FIGS = [("t2v_r1", "t2v R@1"), ("v2t_r1", "v2t R@1"), ("t2v_r5", "t2v R@5")]


def t975(df):
    if df <= 30:
        return T975[df - 1]
    return 2.021 if df <= 40 else 2.000 if df <= 60 else 1.980 if df <= 120 else 1.960


def interval(values):
    """(mean, half-width of its 95% t interval or nan, n) of values, in points"""
    if not values:
        return float("nan"), float("nan"), 0
    if len(values) < 2:
        return values[0], float("nan"), 1
    return (statistics.mean(values), t975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values)),
            len(values))


def cell_of(r):
    return r.get("batch", 32), r.get("ranks", 1)


def values(rows, cell, loss, key):
    return {r["seed"]: 100 * r[key] for r in rows if cell_of(r) == cell and r["loss"] == loss}


def paired(rows, cell, loss, base, key):
    """(mean, half-width, n) of loss - base over the seeds both have"""
    a, b = values(rows, cell, loss, key), values(rows, cell, base, key)
    return interval([a[s] - b[s] for s in sorted(a) if s in b])


def fmt(m, h, n, sign=""):
    if n == 0:
        return "-"
    if math.isnan(h):
        return f"{m:{sign}.1f} (1 seed)"
    return f"{m:{sign}.1f} [{m - h:{sign}.1f}, {m + h:{sign}.1f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--markdown")
    ap.add_argument("--baseline", default="openclip")
    a = ap.parse_args()
    rows = [json.loads(line) for line in open(a.results) if line.strip()]
    if not rows:
        raise SystemExit("bench-learn: no results in " + a.results)
    base = a.baseline
    losses = list(dict.fromkeys(r["loss"] for r in rows))
    cells = list(dict.fromkeys(cell_of(r) for r in rows))
    r0 = rows[0]
    chance = f"chance t2v R@1 {100 * r0['chance_r1']:.2f}, v2t R@1 {100 * r0.get('chance_v2t_r1', r0['chance_r1']):.2f}"
    held = f"{r0['n']} held-out {'images' if r0.get('media') == 'image' else 'clips'}"
    if "captions" in r0:
        held += f" ({r0['captions']} distinct captions)"
    print(f"held-out retrieval, tiny model, {r0.get('variant', 'basic world')}: {held}; "
          f"{r0.get('samples', '?')} samples seen per run of a training set of {r0.get('dataset', '?')}; {chance}")
    print("mean [95% interval] over the seeds, in points; differences are paired per seed (same data order "
          "and initial weights)")
    md = ["| batch x ranks | loss | t2v R@1 | v2t R@1 | t2v R@5 | t2v R@1 − openclip | v2t R@1 − openclip | seeds |",
          "|---|---|---|---|---|---|---|---|"]
    summary = []
    for cell in cells:
        crow = [r for r in rows if cell_of(r) == cell]
        steps = crow[0].get("steps", "?")
        epochs = f", {crow[0]['samples'] / crow[0]['dataset']:.1f} epochs" if "dataset" in crow[0] else ""
        b, k = cell
        print(f"\nbatch {b} on {k} rank(s) ({b // k} each), {steps} steps{epochs}")
        print(f"{'loss':<13} " + " ".join(f"{name:>20}" for _, name in FIGS) +
              f" {'t2v R@1 - ' + base:>28} {'v2t R@1 - ' + base:>28} seeds")
        for loss in losses:
            cells_ = [interval(list(values(rows, cell, loss, key).values())) for key, _ in FIGS]
            if cells_[0][2] == 0:
                continue
            diffs = [paired(rows, cell, loss, base, key) for key in ("t2v_r1", "v2t_r1")]
            dtext = [fmt(*d, sign="+") if loss != base else "" for d in diffs]
            print(f"{loss:<13} " + " ".join(f"{fmt(*c):>20}" for c in cells_) +
                  f" {dtext[0]:>28} {dtext[1]:>28} {cells_[0][2]}")
            md.append(f"| {b} x {k} | {loss} | " + " | ".join(fmt(*c) for c in cells_) + " | " +
                      " | ".join(d if d else "" for d in dtext) + f" | {cells_[0][2]} |")
            if loss == "fastclip-v3" and base in losses:
                summary.append(f"{b}x{k} {fmt(*diffs[0], sign='+')}")
        print("an interval that holds 0 does not tell the two losses apart at these seeds")
    cpu = [r["cpu_s"] for r in rows if "cpu_s" in r]
    if cpu:
        print(f"\ncost: {len(cpu)} runs measured, {statistics.mean(cpu):.0f} CPU-s per run on average "
              f"({sum(cpu) / 60:.0f} CPU-min in all, training and evaluation); "
              f"wall {statistics.mean(r['train_s'] + r['eval_s'] for r in rows):.0f} s per run on average")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(md) + "\n")
    print("\nbench-learn: fastclip-v3 - " + base + ", t2v R@1 points [95%]: " +
          ("; ".join(summary) if summary else "not run"))


if __name__ == "__main__":
    main()
