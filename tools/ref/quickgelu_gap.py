#!/usr/bin/env python3
"""How far QuickGELU weights move when run as exact GELU (docs/model.md, --act): the same weights in an
open_clip model of each activation, max |diff| and 1 - cos of the L2-normalized image and text
features on 4 random images and 4 captions (seed 0).
Usage: quickgelu_gap.py [MODEL (ViT-B-16)] [--pretrained TAG]: without TAG open_clip's own random
initialisation; with it (e.g. openai) weights open_clip must already have or may download."""
import argparse

import open_clip
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default="ViT-B-16")
    ap.add_argument("--pretrained", default=None)
    a = ap.parse_args()
    torch.manual_seed(0)
    m_q = open_clip.create_model(a.model + "-quickgelu", pretrained=a.pretrained)
    m_g = open_clip.create_model(a.model, pretrained=None)
    m_g.load_state_dict(m_q.state_dict())
    m_q.eval()
    m_g.eval()
    tok = open_clip.get_tokenizer(a.model)
    size = m_q.visual.image_size
    img = torch.randn(4, 3, *(size if isinstance(size, (tuple, list)) else (size, size)))
    txt = tok(["a photo of a dog", "a person cutting an onion", "two cats on a sofa", "a red car"])
    with torch.no_grad():
        fi = [torch.nn.functional.normalize(m.encode_image(img), dim=-1) for m in (m_q, m_g)]
        ft = [torch.nn.functional.normalize(m.encode_text(txt), dim=-1) for m in (m_q, m_g)]
    what = a.pretrained or "random init"
    for n, (q, g) in (("image", fi), ("text", ft)):
        print(f"{a.model} ({what}) {n}: max|diff| {float((q - g).abs().max()):.3g}, "
              f"1-cos max {float(1 - (q * g).sum(-1).min()):.3g}")


if __name__ == "__main__":
    main()
