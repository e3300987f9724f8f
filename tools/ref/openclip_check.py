#!/usr/bin/env python3
"""Checks an exported file (tools/export) outside this project: in the PyTorch twin of the model
(tools/ref/model_twin.py) and, when the open_clip package is installed, in open_clip's CLIP built
from the file's metadata and loaded with strict=True; both must give the features this project's
model gave (INPUTS: input/video, input/text, out/video_features, out/text_features).

    python3 tools/ref/openclip_check.py EXPORTED.safetensors INPUTS.safetensors [--require-open-clip]

Prints the largest feature difference of each; exit 0 when all are below 1e-4, 1 otherwise, 77
when torch is missing (or open_clip with --require-open-clip).
"""
import os
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("skip: torch is not installed")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_twin  # noqa: E402
import st_io  # noqa: E402

TOL = 1e-4


def twin_features(weights, meta, video, ids):
    m = meta
    c = dict(image_size=int(m["vision.image_size"]), patch=int(m["vision.patch_size"]),
             frames=int(m["vision.frames"]), vis_width=int(m["vision.width"]), vis_layers=int(m["vision.layers"]),
             vis_heads=int(m["vision.heads"]), vocab=int(m["text.vocab_size"]), ctx_len=int(m["text.context_length"]),
             txt_width=int(m["text.width"]), txt_layers=int(m["text.layers"]), txt_heads=int(m["text.heads"]),
             embed_dim=int(m["embed_dim"]), mlp_ratio=int(m["mlp_ratio"]), act=m["act"])
    net = model_twin.Clip(c).float()
    sd = {k: torch.from_numpy(v.copy()) for k, v in weights.items()}
    if "visual.temporal_embedding" not in sd:  # an --image export: the twin's video tower has one
        sd["visual.temporal_embedding"] = torch.zeros(c["frames"], c["vis_width"])
    net.load_state_dict(sd, strict=True)
    with torch.no_grad():
        v, t, _ = net(torch.from_numpy(video.copy()), torch.from_numpy(ids.astype("int64")))
    return v.numpy(), t.numpy()


def open_clip_features(weights, meta, video, ids):
    import open_clip
    from open_clip.model import CLIP
    m = meta
    vision = dict(image_size=int(m["vision.image_size"]), patch_size=int(m["vision.patch_size"]),
                  width=int(m["vision.width"]), layers=int(m["vision.layers"]),
                  head_width=int(m["vision.head_width"]), mlp_ratio=float(m["mlp_ratio"]))
    text = dict(context_length=int(m["text.context_length"]), vocab_size=int(m["text.vocab_size"]),
                width=int(m["text.width"]), heads=int(m["text.heads"]), layers=int(m["text.layers"]),
                mlp_ratio=float(m["mlp_ratio"]))
    net = CLIP(int(m["embed_dim"]), vision, text, quick_gelu=m["act"] == "quick_gelu").float().eval()
    net.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in weights.items()}, strict=True)
    img = torch.from_numpy(video[:, 0].copy()).permute(0, 3, 1, 2)  # (B, 3, H, W): frame 0
    with torch.no_grad():
        v = F.normalize(net.encode_image(img), dim=-1)
        t = F.normalize(net.encode_text(torch.from_numpy(ids.astype("int64"))), dim=-1)
    return open_clip.__version__, v.numpy(), t.numpy()


def main():
    exported, inputs = sys.argv[1], sys.argv[2]
    need_oc = "--require-open-clip" in sys.argv
    weights, meta = st_io.read(exported)
    ref, _ = st_io.read(inputs)
    video, ids = ref["input/video"], ref["input/text"]
    want_v, want_t = ref["out/video_features"], ref["out/text_features"]
    bad = 0
    v, t = twin_features(weights, meta, video, ids)
    d = max(abs(v - want_v).max(), abs(t - want_t).max())
    print(f"PyTorch twin, open_clip names, strict load: max |feature diff| {d:.3g}")
    bad |= not d < TOL
    if int(meta["vision.frames"]) == 1:
        try:
            ver, v, t = open_clip_features(weights, meta, video, ids)
        except ImportError:
            print("open_clip is not installed: its check is left out")
            if need_oc:
                sys.exit(77)
        else:
            d = max(abs(v - want_v).max(), abs(t - want_t).max())
            print(f"open_clip {ver} CLIP, load_state_dict(strict=True): max |feature diff| {d:.3g}")
            bad |= not d < TOL
    print("FAIL" if bad else "PASS")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
