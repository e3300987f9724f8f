#!/usr/bin/env python3
# The PyTorch reference of the video tower with drop path (test_model_droppath_torch.sh): reads what
# `test_model_droppath --dump FILE` wrote (f64 weights under open_clip's names, the patches, each
# block's per-sample branch scales, d(feature)) and recomputes the ln_post feature and every visual
# gradient in torch (f64): x = x + s1[b]·attn(ln_1(x)); x = x + s2[b]·mlp(ln_2(x)), timm's DropPath
# with the mask and 1/keep given. Exit 0 when the C results agree within 1e-10 relative, else 1.
import json
import struct
import sys

import numpy as np
import torch

TOL = 1e-10  # both sides compute in double; the sums' order differs


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    head = json.loads(raw[8 : 8 + n])
    meta = head.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, e in head.items():
        assert e["dtype"] == "F64", f"{name}: {e['dtype']}"
        a, b = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(raw[base + a : base + b], dtype="<f8").reshape(e["shape"]).copy())
    return out, meta


def layernorm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)


def act(x, kind):
    return x * torch.sigmoid(1.702 * x) if kind == "quickgelu" else torch.nn.functional.gelu(x)


def attention(x, w_in, b_in, w_out, b_out, heads):
    B, L, W = x.shape
    q, k, v = (x @ w_in.T + b_in).split(W, dim=-1)
    sh = lambda t: t.reshape(B, L, heads, W // heads).transpose(1, 2)
    o = torch.nn.functional.scaled_dot_product_attention(sh(q), sh(k), sh(v))
    return o.transpose(1, 2).reshape(B, L, W) @ w_out.T + b_out


def tower(t, p, scales, heads, kind, layers):
    W = p["visual.class_embedding"].shape[0]
    patches = t["patches"]
    B, TP, _ = patches.shape
    P = p["visual.positional_embedding"].shape[0] - 1
    T = TP // P
    emb = patches @ p["visual.conv1.weight"].reshape(W, -1).T
    tok = emb.reshape(B, T, P, W) + p["visual.positional_embedding"][1:] + p["visual.temporal_embedding"][:, None]
    cls = (p["visual.class_embedding"] + p["visual.positional_embedding"][0]).expand(B, 1, W)
    x = torch.cat([cls, tok.reshape(B, TP, W)], dim=1)
    x = layernorm(x, p["visual.ln_pre.weight"], p["visual.ln_pre.bias"])
    for l in range(layers):
        g = lambda n: p[f"visual.transformer.resblocks.{l}.{n}"]
        s1, s2 = scales[l, 0][:, None, None], scales[l, 1][:, None, None]
        a = attention(layernorm(x, g("ln_1.weight"), g("ln_1.bias")), g("attn.in_proj_weight"),
                      g("attn.in_proj_bias"), g("attn.out_proj.weight"), g("attn.out_proj.bias"), heads)
        x = x + s1 * a
        h = act(layernorm(x, g("ln_2.weight"), g("ln_2.bias")) @ g("mlp.c_fc.weight").T + g("mlp.c_fc.bias"), kind)
        x = x + s2 * (h @ g("mlp.c_proj.weight").T + g("mlp.c_proj.bias"))
    return layernorm(x[:, 0], p["visual.ln_post.weight"], p["visual.ln_post.bias"])


def main():
    t, meta = read_safetensors(sys.argv[1])
    params = {k: v.clone().requires_grad_(True) for k, v in t.items() if k.startswith("visual.")}
    scales = t["scales"]
    layers = scales.shape[0]
    kept = int((scales > 0).sum())
    feat = tower(t, params, scales, int(meta["heads"]), meta["act"], layers)
    (feat * t["dvln"]).sum().backward()
    rel = lambda a, b: float((a - b).norm() / max(float(b.norm()), 1e-300))
    worst = rel(t["vln"], feat.detach())
    which = "feature"
    for k, v in params.items():
        e = rel(t["grad." + k], v.grad)
        if e > worst:
            worst, which = e, k
    print(f"torch reference, {layers} blocks with drop path ({kept} of {scales.numel()} branches kept): "
          f"worst relative L2 {worst:.3g} ({which}), feature and {len(params)} gradients")
    return 0 if worst < TOL else 1


if __name__ == "__main__":
    sys.exit(main())
