#!/usr/bin/python3
"""PyTorch twin of the C dual encoder (model_*): writes tests/fixtures/model_twin.safetensors.

Run by hand (not in CI) with Debian's python3-torch:  /usr/bin/python3 tools/ref/model_twin.py
The model is written from the open_clip / AVION definitions with torch modules (conv1 patch
embedding, nn.MultiheadAttention, nn.GELU), not from the C code, in float64 from f32-rounded
weights. The file holds, under open_clip names: the weights, then input/video, input/text,
out/video_features, out/text_features, out/loss and grad/<name> for every parameter.
Format version 1 (metadata avclip.twin).
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402

CFG = dict(image_size=16, patch=8, frames=2, vis_width=16, vis_layers=2, vis_heads=2, vocab=64, ctx_len=16,
           txt_width=16, txt_layers=2, txt_heads=2, embed_dim=8, mlp_ratio=4, batch=4)


class QuickGELU(nn.Module):
    """OpenAI CLIP's activation (--act quickgelu)"""

    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class Block(nn.Module):
    def __init__(self, w, heads, mlp, act="gelu"):
        super().__init__()
        self.ln_1 = nn.LayerNorm(w)
        self.attn = nn.MultiheadAttention(w, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(w)
        self.mlp = nn.Sequential()
        self.mlp.add_module("c_fc", nn.Linear(w, mlp * w))
        self.mlp.add_module("gelu", QuickGELU() if act == "quick_gelu" else nn.GELU())
        self.mlp.add_module("c_proj", nn.Linear(mlp * w, w))

    def forward(self, x, mask=None):
        y = self.ln_1(x)
        x = x + self.attn(y, y, y, need_weights=False, attn_mask=mask)[0]
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, w, layers, heads, mlp, act="gelu"):
        super().__init__()
        self.resblocks = nn.ModuleList([Block(w, heads, mlp, act) for _ in range(layers)])

    def forward(self, x, mask=None):
        for b in self.resblocks:
            x = b(x, mask)
        return x


class Visual(nn.Module):
    """open_clip VisionTransformer + AVION's temporal embedding (joint space-time attention)"""

    def __init__(self, c):
        super().__init__()
        w, p = c["vis_width"], c["patch"]
        self.c = c
        n = (c["image_size"] // p) ** 2
        self.conv1 = nn.Conv2d(3, w, p, stride=p, bias=False)
        self.class_embedding = nn.Parameter(torch.zeros(w))
        self.positional_embedding = nn.Parameter(torch.zeros(n + 1, w))
        self.temporal_embedding = nn.Parameter(torch.zeros(c["frames"], w))
        self.ln_pre = nn.LayerNorm(w)
        self.transformer = Transformer(w, c["vis_layers"], c["vis_heads"], c["mlp_ratio"], c.get("act", "gelu"))
        self.ln_post = nn.LayerNorm(w)
        self.proj = nn.Parameter(torch.zeros(w, c["embed_dim"]))

    def forward(self, video):  # (B, T, H, W, 3)
        B, T = video.shape[:2]
        x = self.conv1(video.permute(0, 1, 4, 2, 3).flatten(0, 1))  # (B*T, w, gh, gw)
        x = x.flatten(2).transpose(1, 2)  # (B*T, P, w)
        x = x + self.positional_embedding[1:]
        x = x.reshape(B, T, -1, x.shape[-1]) + self.temporal_embedding[None, :, None, :]
        x = x.flatten(1, 2)  # (B, T*P, w), frame-major
        cls = (self.class_embedding + self.positional_embedding[0]).expand(B, 1, -1)
        x = self.ln_pre(torch.cat([cls, x], dim=1))
        x = self.transformer(x)
        return self.ln_post(x[:, 0]) @ self.proj


class Clip(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.visual = Visual(c)
        self.token_embedding = nn.Embedding(c["vocab"], c["txt_width"])
        self.positional_embedding = nn.Parameter(torch.zeros(c["ctx_len"], c["txt_width"]))
        self.transformer = Transformer(c["txt_width"], c["txt_layers"], c["txt_heads"], c["mlp_ratio"],
                                       c.get("act", "gelu"))
        self.ln_final = nn.LayerNorm(c["txt_width"])
        self.text_projection = nn.Parameter(torch.zeros(c["txt_width"], c["embed_dim"]))
        self.logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))
        L = c["ctx_len"]
        self.register_buffer("attn_mask", torch.full((L, L), float("-inf")).triu(1), persistent=False)

    def encode_text(self, ids):
        x = self.token_embedding(ids) + self.positional_embedding
        x = self.ln_final(self.transformer(x, self.attn_mask.to(x.dtype)))
        return x[torch.arange(x.shape[0]), ids.argmax(dim=-1)] @ self.text_projection

    def forward(self, video, ids):
        v = F.normalize(self.visual(video), dim=-1)
        t = F.normalize(self.encode_text(ids), dim=-1)
        logits = self.logit_scale.exp() * v @ t.T
        labels = torch.arange(v.shape[0])
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
        return v, t, loss


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "..", "tests", "fixtures", "model_twin.safetensors")
    c = CFG
    torch.manual_seed(20261130)
    m = Clip(c).double()
    # random weights everywhere (biases, temporal embedding and LN affine too, so every
    # gradient path is exercised), rounded to f32 so both sides start from the same values
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name == "logit_scale":
                continue
            std = 0.5 if p.ndim == 1 or "embedding" in name else p.shape[-1] ** -0.5
            p.copy_((torch.randn(p.shape, dtype=torch.float64) * std).float().double())
            if "ln_" in name and name.endswith("weight"):  # every LayerNorm gain around 1
                p.add_(1.0)
    B, T, S, L, V = c["batch"], c["frames"], c["image_size"], c["ctx_len"], c["vocab"]
    video = torch.randn(B, T, S, S, 3).float().double()
    ids = torch.zeros(B, L, dtype=torch.int64)
    g = torch.Generator().manual_seed(7)
    for b in range(B):
        n = int(torch.randint(3, L, (1,), generator=g))
        ids[b, : n - 1] = torch.randint(1, V - 1, (n - 1,), generator=g)
        ids[b, n - 1] = V - 1
    v, t, loss = m(video, ids)
    loss.backward()
    tensors = {}
    for name, p in m.named_parameters():
        tensors[name] = p.detach().float().numpy()
    tensors["input/video"] = video.float().numpy()
    tensors["input/text"] = ids.int().numpy()
    tensors["out/video_features"] = v.detach().float().numpy()
    tensors["out/text_features"] = t.detach().float().numpy()
    tensors["out/loss"] = np.array([loss.item()], dtype=np.float32)
    for name, p in m.named_parameters():
        tensors["grad/" + name] = p.grad.float().numpy()
    meta = {"avclip.twin": "1", "torch": torch.__version__}
    meta.update({k: str(v) for k, v in c.items()})
    st_io.write(out, tensors, meta)
    print(f"wrote {out}: {len(tensors)} tensors, loss {loss.item():.6f}, "
          f"{sum(p.numel() for p in m.parameters())} parameters")


if __name__ == "__main__":
    main()
