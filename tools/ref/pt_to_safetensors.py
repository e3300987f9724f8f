#!/usr/bin/python3
"""Converts an open_clip / OpenAI CLIP PyTorch checkpoint to a safetensors file the C loader
(trainer/st_model.c) reads, keeping open_clip tensor names. Run by hand (needs torch):

    /usr/bin/python3 tools/ref/pt_to_safetensors.py ViT-B-16.pt clip-b16.safetensors

Accepts a TorchScript archive (OpenAI's released .pt), a plain state_dict, or a training
checkpoint holding one under "state_dict" (a "module." prefix from DDP is removed). Tensors are
written as float32; OpenAI's non-parameter entries (input_resolution, context_length,
vocab_size, attn_mask) are dropped. To start the AVION video tower from it, load with prefix
"visual." and skip "visual.proj" when the embedding widths differ (see StLoadOpts).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402

DROP = {"input_resolution", "context_length", "vocab_size", "attn_mask"}


def load_state_dict(path):
    try:
        return torch.jit.load(path, map_location="cpu").state_dict()
    except RuntimeError:
        obj = torch.load(path, map_location="cpu")
    if isinstance(obj, dict) and "state_dict" in obj:
        obj = obj["state_dict"]
    return {k[7:] if k.startswith("module.") else k: v for k, v in obj.items()}


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} IN.pt OUT.safetensors")
    sd = load_state_dict(sys.argv[1])
    tensors = {k: v.detach().float().cpu().numpy() for k, v in sd.items()
               if torch.is_tensor(v) and k.split(".")[-1] not in DROP}
    st_io.write(sys.argv[2], tensors, {"format": "pt", "source": os.path.basename(sys.argv[1])})
    print(f"wrote {sys.argv[2]}: {len(tensors)} tensors")


if __name__ == "__main__":
    main()
