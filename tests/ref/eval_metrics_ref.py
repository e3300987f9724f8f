"""Independent numpy references of tools/eval's benchmark metrics, written from the benchmarks'
definitions (not from the C): EK-100 MIR mAP and nDCG (LaViLa's calculate_mAP / calculate_nDCG:
relevance == 1 counts for mAP, graded relevance and k = the number of non-zero relevances for
nDCG), the (S+1)/2 rescale in float32, Charades-Ego multi-label mAP (charades_map), mean-class
accuracy (get_mean_accuracy on sklearn's confusion matrix), EgoMCQ accuracy by type and EK-100
action recognition (top-1/top-5 and mean-class accuracy of the action scores and of the verb and
noun scores marginalised from their softmax, AVION's evaluation_ek100cls.py: get_marginal_indexes
gives a verb no action has the probability of action 0; softmax and sums in float64, ranked as
float32); and the accuracy of classification heads (tools/eval --task probe|classify): a head's
top-1/top-5, mean-class, most frequent class and confusion summary, the mean of multi-view logits
(AVION's all_logits.mean(axis=1)), and the action accuracy of verb and noun heads (EK-100's
compute_action_scores: pairs ranked by the product of the softmaxes, i.e. by the sum of the scores).

Ties: every ranking is a stable descending order (the lower index first), the order the C code
defines; upstream's argsort leaves it unspecified. A query or class without a relevant item has
no value and is left out of the mean (upstream's np.mean would give NaN).

  eval_metrics_ref.py gen SEED CASES REF   random cases (ties, empty classes, all-zero rows)
  eval_metrics_ref.py compare REF OUT      OUT (test_eval_metrics_bench --dump CASES) against REF
"""
import sys

import numpy as np


def ranked(row):
    return np.argsort(-np.asarray(row, dtype=np.float64), kind="stable")


def ap_of(order, positive):
    hit = positive[order]
    if not hit.any():
        return float("nan")
    places = np.arange(1, len(order) + 1)
    return float(np.sum((np.cumsum(hit) / places)[hit]) / hit.sum())


def mir_map(sim, rel):
    aps = [ap_of(ranked(sim[i]), rel[i] == 1) for i in range(sim.shape[0])]
    aps = [a for a in aps if not np.isnan(a)]
    return (float(np.mean(aps)) if aps else None), len(aps)


def mir_ndcg(sim, rel):
    vals = []
    for i in range(sim.shape[0]):
        k = int(np.count_nonzero(rel[i] > 0))
        if k == 0:
            continue
        disc = 1.0 / np.log2(np.arange(k) + 2.0)
        gain = rel[i][ranked(sim[i])][:k].astype(np.float64)
        ideal = np.sort(rel[i].astype(np.float64))[::-1][:k]
        vals.append(float(np.sum(gain * disc) / np.sum(ideal * disc)))
    return (float(np.mean(vals)) if vals else None), len(vals)


def multilabel_map(scores, gt):
    keep = gt.sum(axis=1) > 0
    s, g = scores[keep], gt[keep]
    aps = [ap_of(ranked(s[:, c]), g[:, c] == 1) for c in range(gt.shape[1])]
    good = [a for a in aps if not np.isnan(a)]
    return (float(np.mean(good)) if good else None), len(good), aps


def class_accuracy(scores, label):
    m = label >= 0
    if not m.any():
        return None
    y, p = label[m], np.argmax(scores[m], axis=1)
    classes = np.unique(y)
    recall = [np.mean(p[y == c] == c) for c in classes]
    union = np.union1d(y, p)
    return float(np.mean(p == y)), float(np.mean(recall)), float(np.sum(recall) / len(union)), len(classes), len(union)


def mcq(scores, answer, types):
    right = np.argmax(scores, axis=1) == answer
    out = {}
    for name, t in (("inter", 1), ("intra", 2)):
        sel = types == t
        out[name] = float(np.mean(right[sel])) if sel.any() else float("nan")
        out["n_" + name] = int(sel.sum())
    return out


def topk(scores, label, k):
    return float(np.mean([label[i] in ranked(scores[i])[:k] for i in range(len(label))]))


def mean_class_union(y, p):
    # get_mean_accuracy(confusion_matrix(y, p)): a row per class in y or p, recall 0 without labels
    classes = np.union1d(y, p)
    return float(np.mean([np.mean(p[y == c] == c) if (y == c).any() else 0.0 for c in classes]))


def marginal_indexes(of):
    return [np.nonzero(of == v)[0] if (of == v).any() else np.array([0]) for v in range(of.max() + 1)]


def ek100_cls(scores, verb, noun, label):
    x = scores.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    out = {}
    for name, s, y in (("action", scores, label),
                       ("verb", None, verb[label]), ("noun", None, noun[label])):
        if s is None:
            idx = marginal_indexes(verb if name == "verb" else noun)
            s = np.stack([probs[:, il].sum(1) for il in idx], axis=1).astype(np.float32)
        p = np.argmax(s, axis=1)
        out[name + "_top1"] = float(np.mean(p == y))
        out[name + "_top5"] = topk(s, y, 5)
        out[name + "_mean_class"] = mean_class_union(y, p)
    return out, int(verb.max()) + 1, int(noun.max()) + 1


def ekcls_case(rng, f, ref):
    n, a = int(rng.integers(1, 12)), int(rng.integers(1, 9))
    scores = (rng.integers(-4, 5, size=(n, a)) / 4).astype(np.float32)  # ties
    verb = rng.integers(0, 6, size=a)  # gaps: verbs in no action
    noun = rng.integers(0, 4, size=a)
    label = rng.integers(0, a, size=n)
    f.write(f"ekcls {n} {a}\n")
    write_matrix(f, scores)
    write_matrix(f, verb, integer=True)
    write_matrix(f, noun, integer=True)
    write_matrix(f, label, integer=True)
    r, nv, nn = ek100_cls(scores, verb, noun, label)
    parts = ["ekcls"]
    for name in ("action", "verb", "noun"):
        parts += [f"{name}_{k}={fmt(r[name + '_' + k])}" for k in ("top1", "top5", "mean_class")]
    ref.write(" ".join(parts) + f" verbs={nv} nouns={nn}\n")


def fmt(v):
    if v is None:
        return "err"
    return "nan" if np.isnan(v) else repr(float(v))


def write_matrix(f, x, integer=False):
    for row in np.atleast_2d(x):
        f.write(" ".join(str(int(v)) if integer else repr(float(v)) for v in row) + "\n")


def mir_case(rng, f, ref, rescaled):
    nq, nc = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    if rescaled:  # cosines a few 1e-8 apart: the float32 rescale merges some into ties
        sim = (rng.integers(-3, 4, size=(nq, nc)) * 1e-8 + rng.integers(-1, 2, size=(nq, nc)) * 0.25).astype(np.float32)
    else:
        sim = (rng.integers(-4, 5, size=(nq, nc)) / 4).astype(np.float32)
    rel = rng.choice(np.array([0, 0, 0, 0.25, 0.5, 1], dtype=np.float32), size=(nq, nc))
    if nq > 1:
        rel[rng.integers(nq)] = 0  # an all-zero row (and often all-zero columns)
    kind = "mir_rescaled" if rescaled else "mir"
    f.write(f"{kind} {nq} {nc}\n")
    write_matrix(f, sim)
    write_matrix(f, rel)
    s = ((sim + np.float32(1)) / np.float32(2)).astype(np.float32) if rescaled else sim
    parts = [kind]
    for name, (v, used) in (("map_vt", mir_map(s, rel)), ("map_tv", mir_map(s.T, rel.T)),
                            ("ndcg_vt", mir_ndcg(s, rel)), ("ndcg_tv", mir_ndcg(s.T, rel.T))):
        parts += [f"{name}={fmt(v)}", f"{name}_used={used}"]
    ref.write(" ".join(parts) + "\n")


def mlmap_case(rng, f, ref):
    n, c = int(rng.integers(1, 10)), int(rng.integers(1, 7))
    scores = (rng.integers(-4, 5, size=(n, c)) / 4).astype(np.float32)
    gt = (rng.random((n, c)) < 0.3).astype(np.int64)
    gt[:, rng.integers(c)] = 0  # an empty class
    if n > 1:
        gt[rng.integers(n)] = 0  # a video without labels
    f.write(f"mlmap {n} {c}\n")
    write_matrix(f, scores)
    write_matrix(f, gt, integer=True)
    m, used, aps = multilabel_map(scores, gt)
    ref.write(" ".join(["mlmap", f"map={fmt(m)}", f"used={used}"] + [f"ap{k}={fmt(a)}" for k, a in enumerate(aps)]) + "\n")


def cls_case(rng, f, ref):
    n, c = int(rng.integers(1, 12)), int(rng.integers(1, 7))
    scores = (rng.integers(0, 4, size=(n, c)) / 4).astype(np.float32)
    label = rng.integers(-1, c, size=n)
    f.write(f"cls {n} {c}\n")
    write_matrix(f, scores)
    write_matrix(f, label, integer=True)
    r = class_accuracy(scores, label)
    if r is None:
        ref.write("cls top1=err mean_class=err mean_class_union=err present=0 present_union=0\n")
    else:
        ref.write(f"cls top1={fmt(r[0])} mean_class={fmt(r[1])} mean_class_union={fmt(r[2])} "
                  f"present={r[3]} present_union={r[4]}\n")


def mcq_case(rng, f, ref):
    n = int(rng.integers(1, 12))
    scores = (rng.integers(0, 3, size=(n, 5)) / 2).astype(np.float32)
    answer = rng.integers(0, 5, size=n)
    types = rng.integers(1, 3, size=n) if rng.random() < 0.7 else np.full(n, int(rng.integers(1, 3)))
    f.write(f"mcq {n} 5\n")
    write_matrix(f, scores)
    write_matrix(f, answer, integer=True)
    write_matrix(f, types, integer=True)
    r = mcq(scores, answer, types)
    ref.write(f"mcq inter={fmt(r['inter'])} intra={fmt(r['intra'])} n_inter={r['n_inter']} n_intra={r['n_intra']}\n")


def head(scores, label):
    """A head's accuracy and confusion summary (tools/eval --task probe|classify), from the definitions:
    the prediction is the first highest score (np.argmax), top-5 a stable descending ranking,
    mean-class over the labelled classes and over labelled U predicted, the most frequent labelled
    class, the 5 most frequent mistakes (count desc, then true, predicted), the 5 lowest and
    highest recalls (exact fractions; ties to the lower class)."""
    from fractions import Fraction
    m = label >= 0
    if not m.any():
        return None
    y, p = label[m], np.argmax(scores[m], axis=1)
    r = {"top1": float(np.mean(p == y)), "top5": topk(scores[m], y, 5)}
    classes = np.unique(y)
    recall = {int(c): Fraction(int(np.sum((p == c) & (y == c))), int(np.sum(y == c))) for c in classes}
    r["mean_class"] = float(np.mean([float(v) for v in recall.values()]))
    r["mean_class_union"] = mean_class_union(y, p)
    r["present"], r["present_union"] = len(classes), len(np.union1d(y, p))
    counts = np.bincount(y, minlength=scores.shape[1])
    r["majority"] = int(np.argmax(counts))
    r["majority_top1"] = float(counts.max() / len(y))
    r["zero_recall"] = sum(1 for v in recall.values() if v == 0)
    wrong = {}
    for t, q in zip(y.tolist(), p.tolist()):
        if t != q:
            wrong[(t, q)] = wrong.get((t, q), 0) + 1
    conf = sorted(wrong.items(), key=lambda e: (-e[1], e[0][0], e[0][1]))[:5]
    r["confused"] = [(t, q, c) for (t, q), c in conf]
    n_of = {c: int(np.sum(y == c)) for c in recall}
    worst = sorted(recall, key=lambda c: (recall[c], c))[:5]
    best = sorted(recall, key=lambda c: (-recall[c], c))[:5]
    r["worst"] = [(c, recall[c].numerator * n_of[c] // recall[c].denominator, n_of[c]) for c in worst]
    r["best"] = [(c, recall[c].numerator * n_of[c] // recall[c].denominator, n_of[c]) for c in best]
    return r


def head_line(kind, r):
    keys = ("top1", "top5", "mean_class", "mean_class_union", "majority_top1")
    if r is None:
        return (kind + " " + " ".join(f"{k}=err" for k in keys) +
                " present=0 present_union=0 majority=0 zero_recall=0 confused=- worst=- best=-\n")
    lists = [",".join(f"{a}:{b}:{c}" for a, b, c in r[k]) or "-" for k in ("confused", "worst", "best")]
    return (kind + " " + " ".join(f"{k}={fmt(r[k])}" for k in keys) +
            f" present={r['present']} present_union={r['present_union']} majority={r['majority']}"
            f" zero_recall={r['zero_recall']} confused={lists[0]} worst={lists[1]} best={lists[2]}\n")


def pair(s0, s1, l0, l1):
    """Action accuracy from two heads: pairs ranked by p0(v) p1(c), i.e. by s0[v] + s1[c] in float64
    (EK-100's compute_action_scores multiplies the softmaxes), stable descending (ties to the lower
    pair index v * K1 + c); mean-class over the labelled pairs and over labelled U predicted."""
    m = (l0 >= 0) & (l1 >= 0)
    if not m.any():
        return None
    k1 = s1.shape[1]
    key = (s0[m].astype(np.float64)[:, :, None] + s1[m].astype(np.float64)[:, None, :]).reshape(m.sum(), -1)
    truth = l0[m] * k1 + l1[m]
    order = np.argsort(-key, axis=1, kind="stable")
    place = np.array([int(np.nonzero(order[i] == truth[i])[0][0]) for i in range(len(truth))])
    pred = order[:, 0]
    pairs = np.unique(truth)
    recall = [np.mean(pred[truth == c] == c) for c in pairs]
    return {"top1": float(np.mean(place < 1)), "top5": float(np.mean(place < 5)),
            "mean_class": float(np.mean(recall)), "mean_class_union": float(np.sum(recall) / len(np.union1d(truth, pred))),
            "n": int(m.sum()), "present": len(pairs), "present_union": len(np.union1d(truth, pred))}


def head_case(rng, f, ref):
    n, c = int(rng.integers(1, 16)), int(rng.integers(1, 9))
    scores = (rng.integers(0, 4, size=(n, c)) / 4).astype(np.float32)  # ties
    if n > 1:
        scores[rng.integers(n)] = 0  # an all-zero row
    label = rng.integers(-1, c, size=n)
    label[label == c - 1] = -1 if c > 2 else label[label == c - 1]  # an empty class
    f.write(f"head {n} {c}\n")
    write_matrix(f, scores)
    write_matrix(f, label, integer=True)
    ref.write(head_line("head", head(scores, label)))


def views_case(rng, f, ref):
    n, c, v = int(rng.integers(1, 10)), int(rng.integers(1, 7)), int(rng.integers(1, 5))
    sv = (rng.integers(-4, 5, size=(n, v, c)) / 4).astype(np.float32)
    label = rng.integers(-1, c, size=n)
    f.write(f"views {n} {c}\n{v}\n")
    write_matrix(f, sv.reshape(n * v, c))
    write_matrix(f, label, integer=True)
    mean = (sv.astype(np.float64).sum(axis=1) / v).astype(np.float32)
    ref.write(head_line("views", head(mean, label)))


def pair_case(rng, f, ref):
    n, k0, k1 = int(rng.integers(1, 12)), int(rng.integers(1, 6)), int(rng.integers(1, 6))
    s0 = (rng.integers(-3, 4, size=(n, k0)) / 2).astype(np.float32)  # ties within and across pairs
    s1 = (rng.integers(-3, 4, size=(n, k1)) / 2).astype(np.float32)
    if n > 1:
        s0[rng.integers(n)] = 0
        s1[rng.integers(n)] = 0
    l0, l1 = rng.integers(-1, k0, size=n), rng.integers(-1, k1, size=n)
    f.write(f"pair {n} {k0}\n{k1}\n")
    for x in (s0, s1):
        write_matrix(f, x)
    for x in (l0, l1):
        write_matrix(f, x, integer=True)
    r = pair(s0, s1, l0, l1)
    keys = ("top1", "top5", "mean_class", "mean_class_union")
    if r is None:
        ref.write("pair " + " ".join(f"{k}=err" for k in keys) + " n=0 present=0 present_union=0\n")
    else:
        ref.write("pair " + " ".join(f"{k}={fmt(r[k])}" for k in keys) +
                  f" n={r['n']} present={r['present']} present_union={r['present_union']}\n")


def gen(seed, cases, refpath):
    rng = np.random.default_rng(seed)
    with open(cases, "w") as f, open(refpath, "w") as ref:
        for _ in range(40):
            mir_case(rng, f, ref, False)
            mir_case(rng, f, ref, True)
            mlmap_case(rng, f, ref)
            cls_case(rng, f, ref)
            mcq_case(rng, f, ref)
            ekcls_case(rng, f, ref)
            head_case(rng, f, ref)
            views_case(rng, f, ref)
            pair_case(rng, f, ref)


def fields(line):
    toks = line.split()
    return toks[0], dict(t.split("=", 1) for t in toks[1:])


def compare(refpath, outpath):
    ref = open(refpath).read().splitlines()
    out = open(outpath).read().splitlines()
    if len(ref) != len(out):
        print(f"FAIL: {len(ref)} reference cases, {len(out)} from C")
        return 1
    bad = 0
    for n, (r, o) in enumerate(zip(ref, out), 1):
        kr, fr = fields(r)
        ko, fo = fields(o)
        if kr != ko or fr.keys() != fo.keys():
            print(f"FAIL case {n}: fields differ\n  ref {r}\n  C   {o}")
            bad += 1
            continue
        for k, v in fr.items():
            w = fo[k]
            same = v == w or (v not in ("err", "nan") and w not in ("err", "nan")
                              and abs(float(v) - float(w)) <= 1e-9 * max(1.0, abs(float(v))))
            if not same:
                print(f"FAIL case {n} ({kr}) {k}: reference {v}, C {w}")
                bad += 1
    if not bad:
        kinds = sorted({fields(r)[0] for r in ref})
        print(f"{len(ref)} cases ({', '.join(kinds)}) agree with the numpy reference")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "gen":
        gen(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
