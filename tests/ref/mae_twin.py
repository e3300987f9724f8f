#!/usr/bin/env python3
"""A small VideoMAE in PyTorch, the reference tests/test_mae_twin.c holds model/model_mae.c to.

Reads IN (safetensors: the C model's parameters under their names, input.clips u8 (B, T, H, W, 3),
input.masked i32 (B, Nm) masked tubelets, the sizes as metadata), runs the forward in float64 the way
VideoMAE's pretraining does it (Conv3d tubelet embedding; the masked tubelets dropped before the
encoder; the decoder over the visible tokens and one mask token per masked tubelet at
get_sinusoid_encoding_table's positions; norm_pix_loss's target; MSE over the masked tubelets) and
writes OUT: loss (f64) and grad/<name> (f64) for every parameter. Reference only: never run by a
program, only by the test.

Our model departs from VideoMAE where the tower it pretrains must stay loadable by clip and classify
runs, and this twin departs with it: a class token (with the learned positional row 0) goes through
the encoder and, at a zero position, through the decoder (MAE's image design; VideoMAE has none);
the encoder's positions are learned spatial + temporal tables, not the fixed sinusoid; the blocks
are open_clip's (one in_proj with a full bias, LayerNorm eps 1e-5; VideoMAE: q and v biases only,
eps 1e-6); pixels are normalized with CLIP's mean and std.
"""
import json
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)  # kern_augment (kernels/kern_ops.h)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
DTYPES = {"F32": np.float32, "F64": np.float64, "U8": np.uint8, "I32": np.int32}


def read(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    meta = h.pop("__metadata__", {})
    out = {}
    for k, v in h.items():
        raw = b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]
        out[k] = np.frombuffer(raw, dtype=DTYPES[v["dtype"]]).reshape(v["shape"])
    return out, meta


def write(path, tensors):
    header, data = {}, b""
    for k, a in tensors.items():
        raw = np.ascontiguousarray(a, dtype=np.float64).tobytes()
        header[k] = {"dtype": "F64", "shape": list(a.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    j = json.dumps(header).encode()
    j += b" " * (-len(j) % 8)
    open(path, "wb").write(struct.pack("<Q", len(j)) + j + data)


def get_sinusoid_encoding_table(n_position, d_hid):
    """VideoMAE's (modeling_pretrain.py), as it returns it: float32."""
    def get_position_angle_vec(position):
        return [position / np.power(10000, 2 * (hid_j // 2) / d_hid) for hid_j in range(d_hid)]
    table = np.array([get_position_angle_vec(pos_i) for pos_i in range(n_position)])
    table[:, 0::2] = np.sin(table[:, 0::2])
    table[:, 1::2] = np.cos(table[:, 1::2])
    return torch.tensor(table.astype(np.float32), dtype=torch.float64)


def block(x, P, pre, heads):
    """open_clip's ResidualAttentionBlock: x + attn(ln_1(x)), then + mlp(ln_2(.)), exact GELU"""
    B, L, W = x.shape
    h = F.layer_norm(x, (W,), P[pre + "ln_1.weight"], P[pre + "ln_1.bias"], eps=1e-5)
    qkv = F.linear(h, P[pre + "attn.in_proj_weight"], P[pre + "attn.in_proj_bias"])
    q, k, v = qkv.view(B, L, 3, heads, W // heads).permute(2, 0, 3, 1, 4)
    a = ((q @ k.transpose(-1, -2)) * (W // heads) ** -0.5).softmax(-1) @ v
    x = x + F.linear(a.transpose(1, 2).reshape(B, L, W), P[pre + "attn.out_proj.weight"], P[pre + "attn.out_proj.bias"])
    h = F.layer_norm(x, (W,), P[pre + "ln_2.weight"], P[pre + "ln_2.bias"], eps=1e-5)
    h = F.linear(F.gelu(F.linear(h, P[pre + "mlp.c_fc.weight"], P[pre + "mlp.c_fc.bias"])),
                 P[pre + "mlp.c_proj.weight"], P[pre + "mlp.c_proj.bias"])
    return x + h


def forward(P, clips, masked, c):
    B, T, H, Wd, C = clips.shape
    p, tt, W = c["patch"], c["tubelet"], c["vis_width"]
    Tp, Ns = T // tt, (H // p) * (Wd // p)
    N, Nm = Tp * Ns, masked.shape[1]
    mean, std = torch.tensor(CLIP_MEAN, dtype=torch.float64), torch.tensor(CLIP_STD, dtype=torch.float64)
    video = ((clips / 255.0 - mean) / std).permute(0, 4, 1, 2, 3)  # (B, 3, T, H, W)
    # VideoMAE's PatchEmbed: Conv3d(3, W, (tt, p, p), stride (tt, p, p)), tokens in (t', h, w) order
    x = F.conv3d(video, P["visual.conv1.weight"], stride=(tt, p, p)).flatten(2).transpose(1, 2)
    pos = P["visual.positional_embedding"]
    x = x + pos[1:].repeat(Tp, 1) + P["visual.temporal_embedding"].repeat_interleave(Ns, 0)
    cls = (P["visual.class_embedding"] + pos[0]).expand(B, 1, W)
    full = torch.cat([cls, x], 1)
    is_masked = torch.zeros(B, N, dtype=torch.bool)
    for b in range(B):
        is_masked[b, masked[b].long()] = True
    vis = [torch.cat([torch.zeros(1, dtype=torch.long), 1 + torch.nonzero(~is_masked[b]).flatten()]) for b in range(B)]
    x = torch.stack([full[b, vis[b]] for b in range(B)])  # the class token, then the visible tokens
    x = F.layer_norm(x, (W,), P["visual.ln_pre.weight"], P["visual.ln_pre.bias"], eps=1e-5)
    for l in range(c["vis_layers"]):
        x = block(x, P, f"visual.transformer.resblocks.{l}.", c["vis_heads"])
    x = F.layer_norm(x, (W,), P["visual.ln_post.weight"], P["visual.ln_post.bias"], eps=1e-5)
    # the decoder: encoder_to_decoder, visible tokens at their positions, then the mask tokens
    Dd = c["dec_width"]
    e = F.linear(x, P["decoder.embed.weight"])
    dpos = torch.cat([torch.zeros(1, Dd, dtype=torch.float64), get_sinusoid_encoding_table(N, Dd)])
    x = torch.stack([torch.cat([e[b] + dpos[vis[b]], P["decoder.mask_token"] + dpos[1 + masked[b].long()]])
                     for b in range(B)])
    for l in range(c["dec_layers"]):
        x = block(x, P, f"decoder.transformer.resblocks.{l}.", c["dec_heads"])
    x = F.layer_norm(x[:, -Nm:], (Dd,), P["decoder.ln.weight"], P["decoder.ln.bias"], eps=1e-5)
    pred = F.linear(x, P["decoder.head.weight"], P["decoder.head.bias"])
    # norm_pix_loss: per tubelet and channel, '(p0 p1 p2) c' then '(p c)'
    v = (clips / 255.0).reshape(B, Tp, tt, H // p, p, Wd // p, p, C).permute(0, 1, 3, 5, 2, 4, 6, 7)
    v = v.reshape(B, N, tt * p * p, C)
    v = (v - v.mean(dim=-2, keepdim=True)) / (v.var(dim=-2, unbiased=True, keepdim=True).sqrt() + 1e-6)
    target = torch.stack([v[b, masked[b].long()] for b in range(B)]).reshape(B, Nm, -1)
    return F.mse_loss(pred, target)


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: mae_twin.py IN OUT")
    t, meta = read(sys.argv[1])
    c = {k: int(v) for k, v in meta.items()}
    clips = torch.tensor(t.pop("input.clips").astype(np.float64))
    masked = torch.tensor(t.pop("input.masked").astype(np.int64))
    P = {k: torch.tensor(v.astype(np.float64), requires_grad=True) for k, v in t.items()}
    loss = forward(P, clips, masked, c)
    loss.backward()
    out = {"loss": np.array([loss.item()])}
    for k, v in P.items():
        out["grad/" + k] = v.grad.numpy()
    write(sys.argv[2], out)
    print(f"mae_twin: loss {loss.item():.10f} over {len(P)} tensors", file=sys.stderr)


if __name__ == "__main__":
    main()
