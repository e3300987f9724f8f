#!/usr/bin/python3
"""Dumps open_clip's state_dict names and shapes for ViT-B-16 and ViT-L-14 into
tests/fixtures/model_openclip_names.txt, which test_model_openclip_names compares with the C
parameter table (model_params.c), so exported weights load in open_clip and open_clip
weights load here.

Run by hand: needs torch and open_clip_torch (checked with open_clip_torch 2.20.0 on Debian's
python3-torch 1.13 in a venv with --system-site-packages). No weights are downloaded.
Line format: <open_clip model> <tensor name> <dim,dim,...>   ("-" for a 0-d tensor)
"""
import os
import sys

import open_clip

MODELS = ["ViT-B-16", "ViT-L-14"]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "..", "tests", "fixtures", "model_openclip_names.txt")
    lines = []
    for name in MODELS:
        sd = open_clip.create_model(name).state_dict()
        for k, v in sd.items():
            lines.append(f"{name} {k} {','.join(str(d) for d in v.shape) or '-'}")
    with open(out, "w") as f:
        f.write("# open_clip state_dict names and shapes; written by tools/ref/openclip_names.py\n")
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out}: {len(lines)} tensors")


if __name__ == "__main__":
    main()
