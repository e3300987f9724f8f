#!/usr/bin/env python3
# PyTorch twin of FastCLIP's published formulas (Optimization-AI/fast_clip @efd89d5,
# src/fast_clip/loss.py and src/training/train.py): writes the reference fixture the C test
# tests/test_fastclip_twin.c compares against, tensor by tensor, by name.
#
# Run by hand (not in CI), from the repository root:
#   /usr/bin/python3 tools/ref/fastclip_ref.py tests/fixtures/fastclip_ref_v1.bin
# Needs torch (Debian: apt-get install python3-torch). Computes in float64; inputs are drawn
# in float32 so the C side sees the very same values.
#
# The scenario: K=2 ranks simulated in one process, B=4 samples each, d=8, a 24-sample
# dataset, one step in each of the epochs listed in EPOCHS, for v0, v1, v2 and v3. Before the
# third step some u entries are set to NaN, inf and 0 to exercise the reset rule.
import math
import struct
import sys

import torch

torch.set_default_dtype(torch.float64)

MAGIC = b"FCREF\0\0\0"
VERSION = 1
K, B, D, NS = 2, 4, 8, 24
N = K * B
EPOCHS = [0, 1, 2, 4]
CFG = dict(gamma_min=0.2, gamma_decay_epochs=3, rho=6.5, eps=1e-14,
           beta1=0.9, beta2=0.98, eps_tau=1e-6,
           v2_tau_init=0.03, v2_lr_tau=0.0133,
           v0_tau_init=0.07, v0_lr=0.05,
           v1_tau_init=0.07,
           v3_tau_init=0.0295, v3_lr_tau=0.05)  # v3 starts at τ ≤ 0.03 (rate ×1/3) and crosses above it


def gamma_of(epoch):  # FastCLIPLoss.adjust_gamma with gamma_schedule="cosine"
    if epoch == 0:
        return 1.0
    if epoch >= CFG["gamma_decay_epochs"]:
        return CFG["gamma_min"]
    return 0.5 * (1 + math.cos(math.pi * epoch / CFG["gamma_decay_epochs"])) * (1 - CFG["gamma_min"]) + CFG["gamma_min"]


def get_mask(h, w, offset):
    inv = torch.nn.functional.one_hot(torch.arange(h) + offset, w).to(torch.get_default_dtype())
    return 1 - inv


def pairwise_loss(f1, f2, scale_im, offset, sim=None, scale_tt=None, bounds=None, update_bounds=True):
    im1, tt1 = f1
    im2, tt2 = f2
    if scale_tt is None:
        scale_tt = scale_im
    b1, b2 = im1.shape[0], im2.shape[0]
    if sim is None:
        sim_im, sim_tt = im1 @ tt2.T, tt1 @ im2.T
    else:
        sim_im, sim_tt = sim
    diag = torch.sum(im1 * tt1, dim=-1, keepdim=True)
    diff_im = (sim_im - diag) * scale_im
    diff_tt = (sim_tt - diag) * scale_tt
    bim = btt = None
    if bounds is not None:
        bim, btt = bounds
        if update_bounds:
            bim = torch.maximum(bim, diff_im.max(dim=-1, keepdim=True).values.detach())
            btt = torch.maximum(btt, diff_tt.max(dim=-1, keepdim=True).values.detach())
        diff_im = diff_im - bim
        diff_tt = diff_tt - btt
    e_im, e_tt = torch.exp(diff_im), torch.exp(diff_tt)
    mask = get_mask(b1, b2, offset) if b1 <= b2 else get_mask(b2, b1, offset).T
    e_im, e_tt = e_im * mask, e_tt * mask
    rws = b2 - 1 if b1 <= b2 else b2 * (b1 - 1) / b1
    return dict(loss_im=e_im.sum(-1, keepdim=True) / rws, loss_tt=e_tt.sum(-1, keepdim=True) / rws,
                sim_im=sim_im, sim_tt=sim_tt, e_im=e_im, e_tt=e_tt, diff_im=diff_im, diff_tt=diff_tt,
                bim=bim, btt=btt)


def bad(u):
    return (u < 1e-35) | u.isinf() | u.isnan()


class Tables:
    def __init__(self, kind):
        self.u1, self.u2 = torch.zeros(NS, 1), torch.zeros(NS, 1)
        if kind == "v2":
            self.tau1 = torch.full((NS, 1), CFG["v2_tau_init"])
            self.tau2 = torch.full((NS, 1), CFG["v2_tau_init"])
            self.b1, self.b2 = torch.zeros(NS, 1), torch.zeros(NS, 1)
            self.m1, self.m2 = torch.zeros(NS, 1), torch.zeros(NS, 1)
            self.v1, self.v2 = torch.zeros(NS, 1), torch.zeros(NS, 1)


def u_update(u, g, gamma, rescale=None):
    b = bad(u).squeeze(-1) if gamma < 1.0 else None
    u = (1 - gamma) * u * (rescale if rescale is not None else 1.0) + gamma * g
    if b is not None and b.any():
        u[b] = g[b]
    return u


def local_global(t, feats, idx, remote, scale, offset, gamma):  # FastCLIPLoss.local
    r = pairwise_loss(feats, remote, scale, offset)
    u1 = u_update(t.u1[idx].clone(), r["loss_im"].detach(), gamma)
    u2 = u_update(t.u2[idx].clone(), r["loss_tt"].detach(), gamma)
    return r, [u1, u2]


def local_individual(t, feats, idx, remote, offset, gamma, epoch):  # FastCLIPLossIndividual.local
    beta1 = CFG["beta1"] if epoch > 0 else 0.0
    beta2 = CFG["beta2"] if epoch > 0 else 0.0
    tau1, tau2 = t.tau1[idx].clone(), t.tau2[idx].clone()
    b1_old, b2_old = t.b1[idx].clone(), t.b2[idx].clone()
    r = pairwise_loss(feats, remote, 1.0 / tau1, offset, scale_tt=1.0 / tau2, bounds=(b1_old, b2_old))
    out = {}
    for side, (u_tab, b_old, bnew, e, diff, m_tab, v_tab, tau, g) in enumerate([
            (t.u1, b1_old, r["bim"], r["e_im"], r["diff_im"], t.m1, t.v1, tau1, r["loss_im"].detach()),
            (t.u2, b2_old, r["btt"], r["e_tt"], r["diff_tt"], t.m2, t.v2, tau2, r["loss_tt"].detach())]):
        u = u_update(u_tab[idx].clone(), g, gamma, torch.exp(b_old - bnew))
        nb = remote[0].shape[0] - 1
        grad = (-1 * (e * (diff + bnew)).sum(-1, keepdim=True) / (u + CFG["eps"]) / nb
                + torch.log(u + CFG["eps"]) + bnew + CFG["rho"]).detach().clamp(-5.0, 5.0)
        m = beta1 * m_tab[idx] + (1 - beta1) * grad
        v = beta2 * v_tab[idx] + (1 - beta2) * grad ** 2
        mh = m / (1 - beta1 ** (epoch + 1))
        vh = v / (1 - beta2 ** (epoch + 1))
        new_tau = (tau - CFG["v2_lr_tau"] * mh / (vh.sqrt() + CFG["eps_tau"])).clamp(0.01, 1.0)
        out[side] = (u, new_tau, bnew, tau, m, v)
    # FastCLIP's gather_list order
    pack = [out[0][0], out[1][0], out[0][1], out[1][1], out[0][2], out[1][2], out[0][3], out[1][3],
            out[0][4], out[1][4], out[0][5], out[1][5]]
    return r, pack


def scatter(t, kind, ids, pack):  # FastCLIPLoss(Individual).set_params
    t.u1[ids], t.u2[ids] = pack[0], pack[1]
    if kind == "v2":
        t.tau1[ids], t.tau2[ids], t.b1[ids], t.b2[ids] = pack[2], pack[3], pack[4], pack[5]
        t.m1[ids], t.m2[ids], t.v1[ids], t.v2[ids] = pack[8], pack[9], pack[10], pack[11]


def run(kind, steps, out):
    t = Tables(kind)
    tau0 = CFG[kind + "_tau_init"]
    log_s = torch.tensor(math.log(1 / tau0), requires_grad=kind in ("v0", "v3"))
    opt = None
    if kind in ("v0", "v3"):
        lr = CFG["v0_lr"] if kind == "v0" else CFG["v3_lr_tau"]
        opt = torch.optim.AdamW([log_s], lr=lr, betas=(CFG["beta1"], CFG["beta2"]), eps=CFG["eps_tau"],
                                weight_decay=0.0)
    for si, (epoch, E1, E2, ids) in enumerate(steps):
        gamma = gamma_of(epoch)
        if si == 2:  # exercise the reset rule (γ < 1 here)
            t.u1[ids[0]] = float("nan")
            t.u2[ids[1]] = float("inf")
            t.u1[ids[2]] = 0.0
            t.u2[ids[3]] = -1.0
        if kind == "v3":  # step_thresh scheduler, called before the step
            opt.param_groups[0]["lr"] = CFG["v3_lr_tau"] * (1 / 3 if 1.0 / math.exp(log_s.item()) <= 0.03 else 1.0)
        remote = (E1.clone(), E2.clone())  # all-gather without gradient
        feats, locs, packs = [], [], []
        for r in range(K):
            f = (E1[r * B:(r + 1) * B].clone().requires_grad_(True), E2[r * B:(r + 1) * B].clone().requires_grad_(True))
            idx = ids[r * B:(r + 1) * B]
            scale = torch.exp(log_s)
            if kind == "v2":
                res, pack = local_individual(t, f, idx, remote, r * B, gamma, epoch)
            else:
                res, pack = local_global(t, f, idx, remote, scale, r * B, gamma)
            feats.append(f)
            locs.append(res)
            packs.append(pack)
        gathered = [torch.cat([p[i] for p in packs]) for i in range(len(packs[0]))]
        scatter(t, kind, ids, gathered)
        de1, de2, losses = [], [], []
        if log_s.grad is not None:
            log_s.grad = None
        dls = 0.0
        for r in range(K):
            f, res, pack = feats[r], locs[r], packs[r]
            sim = (res["sim_tt"].T, res["sim_im"].T)
            if kind == "v2":
                r2 = pairwise_loss(remote, f, 1.0 / gathered[6], r * B, sim=sim, scale_tt=1.0 / gathered[7],
                                   bounds=(gathered[4], gathered[5]), update_bounds=False)
            else:
                r2 = pairwise_loss(remote, f, torch.exp(log_s), r * B, sim=sim)
            loss = (torch.mean(res["loss_im"] / (pack[0] + CFG["eps"]) + res["loss_tt"] / (pack[1] + CFG["eps"]))
                    + torch.mean(r2["loss_im"] / (gathered[0] + CFG["eps"]) + r2["loss_tt"] / (gathered[1] + CFG["eps"]))) / 2
            if kind == "v3":  # multiply_tau
                s = torch.exp(log_s)
                loss = loss / s.detach() + CFG["rho"] / s + torch.mean(torch.log(pack[0]) + torch.log(pack[1])) / 2 / s
            prev = log_s.grad.item() if log_s.grad is not None else 0.0
            loss.backward()
            if log_s.grad is not None:
                dls += (log_s.grad.item() - prev) / K  # DDP averages parameter gradients
            de1.append(f[0].grad)
            de2.append(f[1].grad)
            losses.append(loss.item())
        p = f"{kind}/s{si}/"
        out[p + "loss"] = torch.tensor(losses)
        out[p + "de1"] = torch.cat(de1)
        out[p + "de2"] = torch.cat(de2)
        out[p + "u1"] = t.u1.squeeze(-1).clone()
        out[p + "u2"] = t.u2.squeeze(-1).clone()
        if kind == "v2":
            for name in ("tau1", "tau2", "b1", "b2", "m1", "m2", "v1", "v2"):
                out[p + name] = getattr(t, name).squeeze(-1).clone()
        if opt is not None:
            out[p + "dlog_s"] = torch.tensor([dls])
            log_s.grad = torch.tensor(dls)
            opt.step()
            with torch.no_grad():
                log_s.clamp_(0, math.log(100))
            out[p + "log_s"] = torch.tensor([log_s.item()])


def normalized(g, n, d):
    x = torch.rand(n, d, generator=g, dtype=torch.float32) * 2 - 1
    return (x / x.norm(dim=-1, keepdim=True)).to(torch.float32)


def write(path, tensors):
    body = b""
    for name, t in tensors.items():
        if t.dtype == torch.int64:
            dt, data = 1, t.contiguous().numpy().tobytes()
        else:
            dt, data = 0, t.to(torch.float32).contiguous().numpy().tobytes()
        shape = list(t.shape) + [1] * (4 - t.dim())
        body += struct.pack("<48sII4I", name.encode(), dt, t.dim(), *shape) + data
    header = MAGIC + struct.pack("<III", VERSION, 20, len(tensors))
    with open(path, "wb") as f:
        f.write(header + body)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/fastclip_ref_v1.bin"
    g = torch.Generator().manual_seed(2024)
    out = {}
    for k, v in CFG.items():
        out["cfg/" + k] = torch.tensor([float(v)])
    out["cfg/shape"] = torch.tensor([K, B, D, NS], dtype=torch.int64)
    out["gamma"] = torch.tensor([gamma_of(e) for e in range(6)])
    steps = []
    for si, epoch in enumerate(EPOCHS):
        E1 = normalized(g, N, D)
        E2 = normalized(g, N, D)
        ids = torch.randperm(NS, generator=g)[:N].to(torch.int64)
        out[f"in/s{si}/E1"], out[f"in/s{si}/E2"], out[f"in/s{si}/ids"] = E1, E2, ids
        out[f"in/s{si}/epoch"] = torch.tensor([epoch], dtype=torch.int64)
        steps.append((epoch, E1.to(torch.float64), E2.to(torch.float64), ids))
    for kind in ("v0", "v1", "v2", "v3"):
        run(kind, steps, out)
    write(path, out)
    print(f"wrote {len(out)} tensors to {path}")


if __name__ == "__main__":
    main()
