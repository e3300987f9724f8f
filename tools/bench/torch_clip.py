#!/usr/bin/env python3
"""avclip's dual encoder and training step in PyTorch: the other side of the GPU race (issue 13 item 5).

The model is rebuilt from our own definition, not from open_clip: the presets are read from
model/model_config.c, the forward pass follows model/model_clip.c and
model_block.c (video ViT with the patch embedding as a linear layer over (c, i, j)-ordered
patches, class token, spatial + zero-initialised temporal position, joint space-time pre-LN
blocks, exact GELU; CLIP text transformer, causal, end-token pooling; both projected to the
shared embedding and L2-normalised), and the parameter counts are checked against
`trainer/trainer query params` before anything is timed. The step is what a PyTorch user would
write: uint8 clips copied from pinned memory, CLIP normalisation and flips on the device,
bf16 autocast, F.scaled_dot_product_attention (flash kernels only on CUDA), fused AdamW (decay
as open_clip and the trainer's default --wd-groups: >= 2-D, no bn/ln/bias/logit_scale), and the loss: open_clip's symmetric InfoNCE or
FastCLIP-v3 as in tools/ref/fastclip_ref.py (one rank: u tables, RGCL-g, τ by its own Adam).

Prints one JSON line: clips/s, step ms, peak memory and TFLOP/s (forward matmul FLOPs x 3,
causal attention counted at half). Progress goes to stderr.

  tools/bench/torch_clip.py --preset vit-b16 --batch-size 128 --frames 4 --image-size 224
  tools/bench/torch_clip.py --device cpu --preset tiny --batch-size 4 --steps 2     # smoke test
  tools/bench/torch_clip.py --check-twin tests/fixtures/model_twin.safetensors    # same math as ours
  tools/bench/torch_clip.py --check-fastclip                                      # same loss as tools/ref
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIELDS = ["image_size", "patch", "frames", "vis_width", "vis_layers", "vis_heads", "vocab", "ctx_len", "txt_width",
          "txt_layers", "txt_heads", "embed_dim", "mlp_ratio"]  # ModelConfig's order
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)  # kern_augment (kernels/kern_ops.h)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
HAVE_SDPA = hasattr(F, "scaled_dot_product_attention")


def log(msg):
    print(f"torch_clip: {msg}", file=sys.stderr, flush=True)


def read_presets(path=os.path.join(ROOT, "model", "model_config.c")):
    """The preset table of model_config.c, so the two sides cannot drift apart."""
    with open(path) as f:
        src = f.read()
    presets = {}
    for name, body in re.findall(r'\{\s*"([\w-]+)"\s*,\s*\{([\d,\s]+)\}\s*\}', src):
        vals = [int(v) for v in body.replace(" ", "").split(",") if v]
        if len(vals) == len(FIELDS) + 3:  # ModelConfig's pool last: 0 is the class token, as here
            if vals.pop() != 0:
                raise SystemExit(f"torch_clip: preset {name} in {path} pools other than the class token")
        if len(vals) == len(FIELDS) + 2:  # then its tubelet: 1 is a token per frame, as here
            if vals.pop() != 1:
                raise SystemExit(f"torch_clip: preset {name} in {path} has tubelets of several frames")
        if len(vals) == len(FIELDS) + 1:  # ModelConfig's act after the sizes: 0 is exact GELU, as here
            if vals.pop() != 0:
                raise SystemExit(f"torch_clip: preset {name} in {path} is not a GELU model")
        if len(vals) != len(FIELDS):
            raise SystemExit(f"torch_clip: preset {name} in {path} has {len(vals)} sizes, expected {len(FIELDS)}")
        presets[name] = dict(zip(FIELDS, vals))
    if not presets:
        raise SystemExit(f"torch_clip: no presets found in {path}")
    return presets


def attention(q, k, v, causal):
    """(B, H, L, hd) -> (B, H, L, hd); SDPA where this torch has it, else the plain formula."""
    if HAVE_SDPA:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    s = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    if causal:
        L = q.shape[-2]
        s = s.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return s.softmax(-1) @ v


class QuickGELU(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class Attn(nn.Module):
    """open_clip's parameter names (in_proj_weight (3W, W): q, k, v rows, heads contiguous)"""

    def __init__(self, w, heads):
        super().__init__()
        self.heads = heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * w, w))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * w))
        self.out_proj = nn.Linear(w, w)

    def forward(self, x, causal):
        B, L, W = x.shape
        qkv = F.linear(x, self.in_proj_weight, self.in_proj_bias)
        qkv = qkv.view(B, L, 3, self.heads, W // self.heads).permute(2, 0, 3, 1, 4)
        o = attention(qkv[0], qkv[1], qkv[2], causal)
        return self.out_proj(o.transpose(1, 2).reshape(B, L, W))


class Block(nn.Module):
    def __init__(self, w, heads, mlp, gelu):
        super().__init__()
        self.ln_1 = nn.LayerNorm(w)
        self.attn = Attn(w, heads)
        self.ln_2 = nn.LayerNorm(w)
        self.mlp = nn.Sequential()
        self.mlp.add_module("c_fc", nn.Linear(w, mlp * w))
        self.mlp.add_module("gelu", QuickGELU() if gelu == "quick" else nn.GELU())
        self.mlp.add_module("c_proj", nn.Linear(mlp * w, w))

    def forward(self, x, causal):
        x = x + self.attn(self.ln_1(x), causal)
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, w, layers, heads, mlp, gelu, causal):
        super().__init__()
        self.causal = causal
        self.resblocks = nn.ModuleList([Block(w, heads, mlp, gelu) for _ in range(layers)])

    def forward(self, x):
        for b in self.resblocks:
            x = b(x, self.causal)
        return x


class Visual(nn.Module):
    def __init__(self, c, gelu):
        super().__init__()
        w, p, T = c["vis_width"], c["patch"], c["frames"]
        self.c = c
        self.P = (c["image_size"] // p) ** 2
        self.conv1 = nn.Conv2d(3, w, p, stride=p, bias=False)  # used as a linear layer over patches
        self.class_embedding = nn.Parameter(torch.zeros(w))
        self.positional_embedding = nn.Parameter(torch.zeros(1 + self.P, w))
        self.temporal_embedding = nn.Parameter(torch.zeros(T, w))  # AVION: starts at zero
        self.ln_pre = nn.LayerNorm(w)
        self.transformer = Transformer(w, c["vis_layers"], c["vis_heads"], c["mlp_ratio"], gelu, causal=False)
        self.ln_post = nn.LayerNorm(w)
        self.proj = nn.Parameter(torch.empty(w, c["embed_dim"]))
        self.register_buffer("mean", torch.tensor(CLIP_MEAN), persistent=False)
        self.register_buffer("std", torch.tensor(CLIP_STD), persistent=False)

    def forward(self, video, flip=None):
        """video (B, T, H, W, 3): uint8 (normalised and flipped here) or already normalised floats"""
        B, T, H, W, C = video.shape
        p = self.c["patch"]
        if video.dtype == torch.uint8:
            x = (video.float() / 255.0 - self.mean) / self.std
            if flip is not None:
                x = torch.where(flip.view(B, 1, 1, 1, 1), x.flip(3), x)
        else:
            x = video
        # kern_patchify: patch q = (py, px) in raster order, elements in (c, i, j) order
        x = x.reshape(B, T, H // p, p, W // p, p, C).permute(0, 1, 2, 4, 6, 3, 5).reshape(B, T * self.P, C * p * p)
        x = F.linear(x, self.conv1.weight.flatten(1))
        pos = self.positional_embedding
        x = x + pos[1:].repeat(T, 1) + self.temporal_embedding.repeat_interleave(self.P, 0)  # frame-major tokens
        cls = (self.class_embedding + pos[0]).to(x.dtype).expand(B, 1, -1)
        x = self.transformer(self.ln_pre(torch.cat([cls, x], dim=1)))
        return self.ln_post(x[:, 0]) @ self.proj


class Clip(nn.Module):
    def __init__(self, c, gelu="exact"):
        super().__init__()
        self.visual = Visual(c, gelu)
        self.token_embedding = nn.Embedding(c["vocab"], c["txt_width"])
        self.positional_embedding = nn.Parameter(torch.zeros(c["ctx_len"], c["txt_width"]))
        self.transformer = Transformer(c["txt_width"], c["txt_layers"], c["txt_heads"], c["mlp_ratio"], gelu, causal=True)
        self.ln_final = nn.LayerNorm(c["txt_width"])
        self.text_projection = nn.Parameter(torch.empty(c["txt_width"], c["embed_dim"]))
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
        self.init_weights(c)

    def init_weights(self, c):  # open_clip's scheme, as model/model_params.c
        for tower, W, L in (("visual.", c["vis_width"], c["vis_layers"]), ("", c["txt_width"], c["txt_layers"])):
            for n, p in self.named_parameters():
                if tower and not n.startswith(tower) or not tower and n.startswith("visual."):
                    continue
                with torch.no_grad():
                    if n.endswith("in_proj_weight") or n in ("visual.proj", "text_projection", "visual.class_embedding",
                                                              "visual.positional_embedding"):
                        p.normal_(std=W ** -0.5)
                    elif n.endswith("out_proj.weight") or n.endswith("c_proj.weight"):
                        p.normal_(std=W ** -0.5 * (2 * L) ** -0.5)
                    elif n.endswith("c_fc.weight"):
                        p.normal_(std=(2 * W) ** -0.5)
        with torch.no_grad():
            self.visual.conv1.weight.normal_(std=(3 * c["patch"] ** 2) ** -0.5)
            self.token_embedding.weight.normal_(std=0.02)
            self.positional_embedding.normal_(std=0.01)

    def encode_text(self, ids):
        x = self.transformer(self.token_embedding(ids) + self.positional_embedding)
        return self.ln_final(x[torch.arange(x.shape[0], device=x.device), ids.argmax(dim=-1)]) @ self.text_projection

    def forward(self, video, ids, flip=None):
        v = self.visual(video, flip)
        t = self.encode_text(ids)
        return F.normalize(v.float(), dim=-1), F.normalize(t.float(), dim=-1)


def param_counts(model):
    total = sum(p.numel() for p in model.parameters())
    vis = sum(p.numel() for n, p in model.named_parameters() if n.startswith("visual."))
    return {"params": total, "visual": vis, "text": total - vis}


def model_flops(c, batch):
    """matmul FLOPs of one training step: forward x 3; causal attention at half"""
    P = (c["image_size"] // c["patch"]) ** 2
    Lv, Wv, Lt, Wt, m, E = 1 + c["frames"] * P, c["vis_width"], c["ctx_len"], c["txt_width"], c["mlp_ratio"], c["embed_dim"]

    def layer(L, W, attn_share):
        return 2 * L * W * 3 * W + 4 * L * L * W * attn_share + 2 * L * W * W + 4 * L * W * m * W

    vis = 2 * c["frames"] * P * 3 * c["patch"] ** 2 * Wv + c["vis_layers"] * layer(Lv, Wv, 1.0) + 2 * Wv * E
    txt = c["txt_layers"] * layer(Lt, Wt, 0.5) + 2 * Wt * E
    return 3 * batch * (vis + txt)


# ---- losses ----------------------------------------------------------------------------------

def openclip_loss(v, t, logit_scale):
    logits = logit_scale.exp() * v @ t.T
    labels = torch.arange(v.shape[0], device=v.device)
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


class FastClipV3:
    """FastCLIP-v3 on one rank (tools/ref/fastclip_ref.py with K=1): RGCL-g with a global learnable
    τ = 1/s, per-sample u1/u2, τ updated by its own Adam with the rate x1/3 when τ <= 0.03, log s
    clamped to [0, ln 100]. Everything stays on the device: no host sync per step."""

    def __init__(self, n, device, rho=8.0, gamma=1.0, eps=1e-14, tau=0.07, lr_tau=2e-4, betas=(0.9, 0.98), eps_tau=1e-6,
                 dtype=torch.float32):
        self.u1 = torch.zeros(n, device=device, dtype=dtype)
        self.u2 = torch.zeros(n, device=device, dtype=dtype)
        self.log_s = torch.tensor(math.log(1 / tau), device=device, dtype=dtype, requires_grad=True)
        self.m = torch.zeros((), device=device, dtype=dtype)
        self.v = torch.zeros((), device=device, dtype=dtype)
        self.t = 0
        self.rho, self.gamma, self.eps, self.lr_tau, self.betas, self.eps_tau = rho, gamma, eps, lr_tau, betas, eps_tau

    @staticmethod
    def pairwise(im1, tt1, im2, tt2, scale, sim=None):
        sim_im, sim_tt = (im1 @ tt2.T, tt1 @ im2.T) if sim is None else sim
        diag = (im1 * tt1).sum(-1, keepdim=True)
        off = 1 - torch.eye(im1.shape[0], im2.shape[0], device=im1.device, dtype=im1.dtype)
        e_im = torch.exp((sim_im - diag) * scale) * off
        e_tt = torch.exp((sim_tt - diag) * scale) * off
        n = im2.shape[0] - 1
        return e_im.sum(-1) / n, e_tt.sum(-1) / n, sim_im, sim_tt

    def update_u(self, table, idx, g):  # reset 0/inf/nan entries to g (the README's departure)
        u = table[idx]
        bad = (u < 1e-35) | ~torch.isfinite(u)
        new = torch.where(bad, g, (1 - self.gamma) * u + self.gamma * g)
        table[idx] = new
        return new

    def loss(self, v, t, idx):
        s = self.log_s.exp()
        E1, E2 = v.detach(), t.detach()  # the all-gather without gradient (one rank)
        l_im, l_tt, sim_im, sim_tt = self.pairwise(v, t, E1, E2, s)
        with torch.no_grad():
            u1 = self.update_u(self.u1, idx, l_im.detach())
            u2 = self.update_u(self.u2, idx, l_tt.detach())
        r_im, r_tt, _, _ = self.pairwise(E1, E2, v, t, s, sim=(sim_tt.T, sim_im.T))
        loss = ((l_im / (u1 + self.eps) + l_tt / (u2 + self.eps)).mean()
                + (r_im / (u1 + self.eps) + r_tt / (u2 + self.eps)).mean()) / 2
        return loss / s.detach() + self.rho / s + (torch.log(u1) + torch.log(u2)).mean() / 2 / s

    @torch.no_grad()
    def step_tau(self):
        g = self.log_s.grad
        b1, b2 = self.betas
        self.t += 1
        self.m.mul_(b1).add_((1 - b1) * g)
        self.v.mul_(b2).add_((1 - b2) * g * g)
        rate = torch.where(torch.exp(-self.log_s) <= 0.03, self.lr_tau / 3, self.lr_tau)
        denom = (self.v / (1 - b2 ** self.t)).sqrt() + self.eps_tau
        self.log_s.sub_(rate * (self.m / (1 - b1 ** self.t)) / denom).clamp_(0, math.log(100))
        self.log_s.grad = None


# ---- the benchmark ---------------------------------------------------------------------------

def trainer_counts(trainer, args):
    cmd = [trainer, "query", "params", "--model", args.preset, "--frames", str(args.frames), "--image-size",
           str(args.image_size)]
    try:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"torch_clip: cannot ask our trainer for its parameter count ({' '.join(cmd)}): {e}; "
                         "build it (make) or pass --trainer PATH")
    return json.loads(out.strip().splitlines()[-1])


def make_optimizer(model, args, device):
    def decays(n, p):  # open_clip's groups, the trainer's default --wd-groups
        return p.ndim >= 2 and not any(k in n for k in ("bn", "ln", "bias", "logit_scale"))
    decay = [p for n, p in model.named_parameters() if decays(n, p)]
    rest = [p for n, p in model.named_parameters() if not decays(n, p)]
    groups = [{"params": decay, "weight_decay": args.weight_decay}, {"params": rest, "weight_decay": 0.0}]
    kw = dict(lr=args.lr, betas=(0.9, 0.98), eps=1e-6)
    if device.type == "cuda":
        try:
            return torch.optim.AdamW(groups, fused=True, **kw), True
        except (TypeError, RuntimeError) as e:
            raise SystemExit(f"torch_clip: this torch has no fused AdamW on CUDA ({e}); the race needs torch >= 2.0")
    return torch.optim.AdamW(groups, **kw), False


def synthetic_batch(c, args, device):
    g = torch.Generator().manual_seed(args.seed)
    B, T, S, L, V = args.batch_size, args.frames, args.image_size, c["ctx_len"], c["vocab"]
    video = torch.randint(0, 256, (B, T, S, S, 3), dtype=torch.uint8, generator=g)
    ids = torch.zeros(B, L, dtype=torch.int64)
    for b in range(B):  # <start> words <end>: the end token has the largest id (end-token pooling)
        n = int(torch.randint(3, L + 1, (1,), generator=g))
        ids[b, 0] = V - 2
        ids[b, 1:n - 1] = torch.randint(1, V - 2, (n - 2,), generator=g)
        ids[b, n - 1] = V - 1
    idx = torch.randperm(args.dataset_size, generator=g)[:B]
    flip = torch.rand(B, generator=g) < 0.5
    if device.type == "cuda" and args.data == "pinned":
        video = video.pin_memory()  # copied to the device every step, as our ring's clips are
    else:
        video = video.to(device)
    return video, ids.to(device), idx.to(device), flip.to(device)


def run_benchmark(args):
    device = torch.device(args.device)
    presets = read_presets()
    if args.preset not in presets:
        raise SystemExit(f"torch_clip: unknown preset {args.preset} (model_config.c has {', '.join(presets)})")
    c = dict(presets[args.preset])
    args.frames = args.frames or c["frames"]
    args.image_size = args.image_size or c["image_size"]
    c["frames"], c["image_size"] = args.frames, args.image_size
    if args.image_size % c["patch"]:
        raise SystemExit(f"torch_clip: --image-size {args.image_size} is not a multiple of the patch {c['patch']}")
    if args.batch_size > args.dataset_size:
        raise SystemExit("torch_clip: --batch-size exceeds --dataset-size")
    if device.type == "cuda" and not HAVE_SDPA:
        raise SystemExit("torch_clip: this torch has no scaled_dot_product_attention; the race needs torch >= 2.0")
    torch.manual_seed(args.seed)
    model = Clip(c, args.gelu).to(device)
    mine = param_counts(model)
    ours = trainer_counts(args.trainer, args)
    if any(mine[k] != ours[k] for k in ("params", "visual", "text")):
        raise SystemExit(f"torch_clip: parameter counts differ from our trainer's: PyTorch {mine}, trainer {ours}")
    opt, fused = make_optimizer(model, args, device)
    fc = FastClipV3(args.dataset_size, device) if args.loss == "fastclip-v3" else None
    video_host, ids, idx, flip = synthetic_batch(c, args, device)
    step_fn = model
    if args.compile:
        step_fn = torch.compile(model)
    amp = torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=args.autocast)
    flash = device.type == "cuda" and args.autocast  # the flash kernels take bf16, not float32
    sdpa_ctx = flash_only if flash else (lambda: _null())

    def step():
        video = video_host.to(device, non_blocking=True)
        with amp, sdpa_ctx():
            v, t = step_fn(video, ids, flip)
        loss = fc.loss(v, t, idx) if fc else openclip_loss(v, t, model.logit_scale)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if args.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_norm)
        opt.step()
        if fc:
            fc.step_tau()
        else:
            with torch.no_grad():
                model.logit_scale.clamp_(0, math.log(100))
        return loss

    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    try:
        for _ in range(args.warmup):
            loss = step()
        sync()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            loss = step()
        sync()
        secs = time.perf_counter() - t0
    except RuntimeError as e:  # torch.cuda.OutOfMemoryError is one
        if "out of memory" in str(e).lower():
            print(json.dumps({"impl": "pytorch", "error": f"out of memory at batch {args.batch_size}"}), flush=True)
            sys.exit(3)
        raise
    lval = float(loss.detach())
    if not math.isfinite(lval):
        raise SystemExit(f"torch_clip: the loss is {lval}: the step is broken, its timing means nothing")
    flops = model_flops(c, args.batch_size)
    step_s = secs / args.steps
    if device.type == "cuda":
        peak, mem_kind = torch.cuda.max_memory_allocated() / 2 ** 30, "cuda-allocated"
        dev_name = torch.cuda.get_device_name()
    else:
        import resource
        peak, mem_kind = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20, "cpu-rss"
        dev_name = "cpu"
    return {
        "impl": "pytorch", "torch": torch.__version__, "device": dev_name, "preset": args.preset, "loss": args.loss,
        "batch": args.batch_size, "frames": args.frames, "image_size": args.image_size, "ctx_len": c["ctx_len"],
        "embed_dim": c["embed_dim"], "params": mine["params"], "trainer_params": ours["params"],
        "clips_per_s": round(args.batch_size / step_s, 3), "step_ms": round(step_s * 1e3, 3),
        "peak_mem_gib": round(peak, 3), "mem_kind": mem_kind, "tflops": float(f"{flops / step_s / 1e12:.4g}"),  # significant digits: a CPU smoke run is ~1e-4
        "flops_per_step": int(flops), "attention": "sdpa-flash" if flash else ("sdpa" if HAVE_SDPA else "math"),
        "fused_adamw": fused, "autocast": "bf16" if args.autocast else "off", "gelu": args.gelu,
        "compile": bool(args.compile), "data": args.data if device.type == "cuda" else "host", "steps": args.steps,
        "warmup": args.warmup, "last_loss": round(lval, 6),
    }


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def flash_only():
    """SDPA may use the flash kernels only: a silent fallback to the math kernel would make the
    race unfair to PyTorch, so it fails instead."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel([SDPBackend.FLASH_ATTENTION])
    except ImportError:
        return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)


def check_twin(path):
    """The model above, in float64 on the CPU, against the fixture our C model is tested with
    (tests/fixtures/model_twin.safetensors): features, loss and every parameter's gradient."""
    sys.path.insert(0, os.path.join(ROOT, "tools", "ref"))
    import st_io
    t, meta = st_io.read(path)
    c = {k: int(meta[k]) for k in FIELDS}
    torch.manual_seed(0)
    m = Clip(c).double()
    names = dict(m.named_parameters())
    if set(names) != {k for k in t if "/" not in k}:
        raise SystemExit(f"torch_clip: the fixture's tensors differ from the model's: {sorted(set(names) ^ set(t))}")
    with torch.no_grad():
        for n, p in names.items():
            p.copy_(torch.from_numpy(t[n].copy()).double().reshape(p.shape))
    video = torch.from_numpy(t["input/video"].copy()).double()
    ids = torch.from_numpy(t["input/text"].copy()).long()
    v, tf = m(video, ids)
    loss = openclip_loss(v, tf, m.logit_scale)
    loss.backward()

    def rel(a, ref):
        ref = torch.from_numpy(ref.copy()).double().reshape(a.shape)
        return float((a.detach() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))

    errs = {"video_features": rel(v, t["out/video_features"]), "text_features": rel(tf, t["out/text_features"]),
            "loss": rel(loss.reshape(1), t["out/loss"])}
    errs["grad"] = max(rel(p.grad, t["grad/" + n]) for n, p in names.items())
    worst = max(errs.values())
    print(json.dumps({"twin": "ok" if worst < 1e-5 else "MISMATCH", "max_rel_err": worst, **errs}), flush=True)
    return 0 if worst < 1e-5 else 1


def check_fastclip():
    """FastClipV3 above against tools/ref/fastclip_ref.py run with one rank: four steps over the
    epochs of its schedule (u resets included), loss, feature gradients, u tables, dlog s, log s."""
    sys.path.insert(0, os.path.join(ROOT, "tools", "ref"))
    import fastclip_ref as ref  # (makes float64 the default dtype)
    ref.K, ref.B, ref.N = 1, 8, 8
    cfg = ref.CFG
    g = torch.Generator().manual_seed(7)
    steps = []
    for epoch in ref.EPOCHS:
        E1, E2 = ref.normalized(g, ref.N, ref.D).double(), ref.normalized(g, ref.N, ref.D).double()
        steps.append((epoch, E1, E2, torch.randperm(ref.NS, generator=g)[:ref.N]))
    out = {}
    ref.run("v3", steps, out)
    fc = FastClipV3(ref.NS, torch.device("cpu"), rho=cfg["rho"], eps=cfg["eps"], tau=cfg["v3_tau_init"],
                    lr_tau=cfg["v3_lr_tau"], betas=(cfg["beta1"], cfg["beta2"]), eps_tau=cfg["eps_tau"],
                    dtype=torch.float64)
    worst = 0.0
    for si, (epoch, E1, E2, ids) in enumerate(steps):
        fc.gamma = ref.gamma_of(epoch)
        if si == 2:  # the reference pokes bad u values here
            fc.u1[ids[0]], fc.u2[ids[1]], fc.u1[ids[2]], fc.u2[ids[3]] = float("nan"), float("inf"), 0.0, -1.0
        v, t = E1.clone().requires_grad_(True), E2.clone().requires_grad_(True)
        loss = fc.loss(v, t, ids)
        loss.backward()
        got = {"loss": loss.reshape(1), "de1": v.grad, "de2": t.grad, "u1": fc.u1, "u2": fc.u2,
               "dlog_s": fc.log_s.grad.reshape(1)}
        fc.step_tau()
        got["log_s"] = fc.log_s.detach().reshape(1)
        for k, a in got.items():
            ref_t = out[f"v3/s{si}/{k}"].double()
            err = float((a.detach() - ref_t).abs().max() / ref_t.abs().max().clamp_min(1e-30))
            worst = max(worst, err)
    ok = worst < 1e-9
    print(json.dumps({"fastclip_v3": "ok" if ok else "MISMATCH", "steps": len(steps), "max_rel_err": worst}), flush=True)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--preset", default="vit-b16", help="a preset of model/model_config.c")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--frames", type=int, default=0, help="T (default: the preset's)")
    ap.add_argument("--image-size", type=int, default=0, help="H = W (default: the preset's)")
    ap.add_argument("--loss", choices=["openclip", "fastclip-v3"], default="fastclip-v3")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--steps", type=int, default=20, help="timed steps")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    ap.add_argument("--gelu", choices=["exact", "quick"], default="exact", help="ours is exact (open_clip's default)")
    ap.add_argument("--no-autocast", dest="autocast", action="store_false", help="float32 throughout")
    ap.add_argument("--data", choices=["pinned", "device"], default="pinned",
                    help="pinned: copy the uint8 batch to the GPU every step (as from our ring); device: keep it there")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model (off: the plain eager baseline)")
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--clip-norm", type=float, default=0.0, help="gradient-norm clipping (our default: off)")
    ap.add_argument("--dataset-size", type=int, default=100000, help="rows of FastCLIP's u tables")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--trainer", default=os.path.join(ROOT, "trainer", "trainer"),
                    help="our trainer, asked for its parameter counts")
    ap.add_argument("--check-twin", metavar="FIXTURE", help="compare with the C model's twin fixture instead")
    ap.add_argument("--check-fastclip", action="store_true", help="compare the FastCLIP-v3 loss with tools/ref")
    args = ap.parse_args()
    if args.check_twin:
        return check_twin(args.check_twin)
    if args.check_fastclip:
        return check_fastclip()
    for k in ("batch_size", "steps"):
        if getattr(args, k) < 1:
            raise SystemExit(f"torch_clip: --{k.replace('_', '-')} must be at least 1")
    log(f"{args.preset} B={args.batch_size} loss={args.loss} on {args.device} (torch {torch.__version__})")
    print(json.dumps(run_benchmark(args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
