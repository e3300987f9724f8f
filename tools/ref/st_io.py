"""Minimal safetensors writer/reader for the reference scripts (numpy only, no safetensors pkg).

Used by the PyTorch twins in this folder; the C side reads the files with trainer/st_file.c.
"""
import json
import struct

import numpy as np

_DT = {np.dtype("float32"): "F32", np.dtype("float64"): "F64", np.dtype("int32"): "I32",
       np.dtype("int64"): "I64", np.dtype("uint64"): "U64"}
_NP = {v: k for k, v in _DT.items()}


def write(path, tensors, metadata=None):
    """tensors: dict name -> numpy array (kept in insertion order); metadata: dict str -> str."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, arr in tensors.items():
        arr = np.asarray(arr)
        if not arr.flags.c_contiguous:  # (np.ascontiguousarray would turn 0-d into 1-d)
            arr = arr.copy(order="C")
        b = arr.tobytes()
        header[name] = {"dtype": _DT[arr.dtype], "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read(path):
    """returns (dict name -> numpy array, metadata dict)"""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    out = {}
    for name, d in header.items():
        a, b = d["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=_NP[d["dtype"]]).reshape(d["shape"])
    return out, meta
