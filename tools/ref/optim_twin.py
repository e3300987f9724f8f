#!/usr/bin/python3
"""PyTorch twin of trainer/optim_adam.c: writes tests/fixtures/model_optim_twin.safetensors.

Run by hand with Debian's python3-torch:  /usr/bin/python3 tools/ref/optim_twin.py
Three tensors (a decayed matrix, a 1-D bias and an embedding, both without decay) take four
steps with per-step gradients under global-norm clipping and warmup+cosine LR:
  adamw: torch.optim.AdamW with two param groups, clip_grad_norm_, LambdaLR
  lamb:  LAMB as FastCLIP's src/training/optimizer.py: r = mhat/(sqrt(vhat)+eps) + wd*p,
         p -= lr*||p||/||r||*r, with the trust ratio 1 in a group without weight decay
Stored: init/<name>, grad<k>/<name>, adamw/<name> and lamb/<name> after the last step (float32
tensors; the reference runs in float64). Format version 1 (metadata avclip.optim_twin).
"""
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402

HP = dict(lr=0.02, lr_min=0.001, warmup=2, total=5, beta1=0.9, beta2=0.98, eps=1e-6, wd=0.1, clip=1.0, steps=4)
SHAPES = {"w": (6, 5), "b": (5,), "emb": (7, 3)}
DECAY = {"w": True, "b": False, "emb": False}


def lr_at(step):
    h = HP
    if step < h["warmup"]:
        return h["lr"] * (step + 1) / h["warmup"]
    if step >= h["total"]:
        return h["lr_min"]
    t = (step - h["warmup"]) / (h["total"] - h["warmup"])
    return h["lr_min"] + 0.5 * (h["lr"] - h["lr_min"]) * (1 + math.cos(math.pi * t))


def run(kind, init, grads):
    ps = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in init.items()}
    h = HP
    if kind == "adamw":
        groups = [{"params": [ps[k] for k in ps if DECAY[k]], "weight_decay": h["wd"]},
                  {"params": [ps[k] for k in ps if not DECAY[k]], "weight_decay": 0.0}]
        opt = torch.optim.AdamW(groups, lr=h["lr"], betas=(h["beta1"], h["beta2"]), eps=h["eps"])
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_at(s) / h["lr"])
    state = {k: (torch.zeros_like(p), torch.zeros_like(p)) for k, p in ps.items()}
    for s in range(h["steps"]):
        for k, p in ps.items():
            p.grad = torch.tensor(grads[s][k], dtype=torch.float64)
        torch.nn.utils.clip_grad_norm_(list(ps.values()), h["clip"])
        if kind == "adamw":
            opt.step()
            sched.step()
            continue
        lr, t = lr_at(s), s + 1
        with torch.no_grad():
            for k, p in ps.items():
                m, v = state[k]
                m.mul_(h["beta1"]).add_(p.grad, alpha=1 - h["beta1"])
                v.mul_(h["beta2"]).addcmul_(p.grad, p.grad, value=1 - h["beta2"])
                r = (m / (1 - h["beta1"] ** t)) / ((v / (1 - h["beta2"] ** t)).sqrt() + h["eps"])
                trust = 1.0
                if DECAY[k]:
                    r = r + h["wd"] * p
                    pn, rn = p.norm(), r.norm()
                    trust = (pn / rn).item() if pn > 0 and rn > 0 else 1.0
                p.sub_(lr * trust * r)
    return {k: p.detach().float().numpy() for k, p in ps.items()}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "..", "tests", "fixtures", "model_optim_twin.safetensors")
    rng = np.random.default_rng(11)
    init = {k: rng.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()}
    # gradients alternate between small (unclipped) and large (clipped) global norms
    grads = [{k: (rng.standard_normal(s) * (0.05 if i % 2 == 0 else 3.0)).astype(np.float32)
              for k, s in SHAPES.items()} for i in range(HP["steps"])]
    tensors = {f"init/{k}": v for k, v in init.items()}
    for i, g in enumerate(grads):
        tensors.update({f"grad{i}/{k}": v for k, v in g.items()})
    for kind in ("adamw", "lamb"):
        tensors.update({f"{kind}/{k}": v for k, v in run(kind, init, grads).items()})
    meta = {"avclip.optim_twin": "1", "torch": torch.__version__}
    meta.update({k: repr(v) for k, v in HP.items()})
    st_io.write(out, tensors, meta)
    print(f"wrote {out}: {len(tensors)} tensors")


if __name__ == "__main__":
    main()
