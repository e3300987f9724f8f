# The Python side of tools/bench/peers.sh: PyAV, decord and torchcodec (exact and approximate
# seek) decode the clips of bench_loader's clip list (the loader's own plans: chunk, frame numbers,
# one crop per clip), crop and resize them to the clip size; clips/s per core, best of R rounds.
# Usage: peers.py CLIP_LIST ROUNDS LOADERD_T4 LOADERD_T16 DEMUX_T4 DEMUX_T16
# A reader that is not installed is named and skipped; the ratio line (loaderd / best peer) is last.
import sys
import time

PEERS = ("PyAV", "decord", "torchcodec")
INSTALL = {"PyAV": "pip install av", "decord": "pip install decord",
           "torchcodec": "pip install torchcodec (needs the matching torch)"}


# the peer of each label in the ratio line
SHORT = {"PyAV (needed frames to RGB)": "PyAV", "decord (get_batch)": "decord",
         "torchcodec (exact seek)": "torchcodec exact", "torchcodec (approximate seek)": "torchcodec approximate"}


class Clip:
    __slots__ = ("T", "out", "g", "box", "flip", "sources")


def fail(msg):
    sys.exit("peers.py: " + msg)


def parse_list(path):
    """bench_clips.h's lines, parsed strictly: every field checked, errors name the line."""
    clips = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            where = f"{path} line {no}"
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 15 or fields[0] != "clip":
                fail(f"{where}: not a clip line of at least 15 tab-separated fields")
            try:
                T, oh, ow, g, sw, sh, x, y, w, h, flip, n = (int(v) for v in fields[1:13])
            except ValueError:
                fail(f"{where}: fields 2..13 must be integers")
            if not (1 <= T <= 64 and oh > 0 and ow > 0 and sw > 0 and sh > 0 and flip in (0, 1)):
                fail(f"{where}: T, clip size, source size or flip out of range")
            if not (0 <= x and 0 <= y and w > 0 and h > 0 and x + w <= sw and y + h <= sh):
                fail(f"{where}: crop {w}x{h}+{x}+{y} is not inside the {sw}x{sh} source")
            if n < 1 or len(fields) != 13 + 2 * n:
                fail(f"{where}: {n} sources need {13 + 2 * n} fields, the line has {len(fields)}")
            c = Clip()
            c.T, c.out, c.g, c.box, c.flip, c.sources = T, (ow, oh), g, (x, y, w, h), flip, []
            for k in range(n):
                p, frames = fields[13 + 2 * k], fields[14 + 2 * k]
                try:
                    idx = [int(v) for v in frames.split(",")]
                except ValueError:
                    fail(f"{where}: source {k}: frame list '{frames}' is not comma-separated integers")
                if not p or min(idx) < 0 or idx != sorted(idx):
                    fail(f"{where}: source {k}: empty path or frame numbers not non-decreasing from 0")
                c.sources.append((p, idx))
            if sum(len(i) for _, i in c.sources) != T:
                fail(f"{where}: the sources' frames do not add up to T={T}")
            clips.setdefault(T, []).append(c)
    if not clips:
        fail(f"{path}: no clips")
    return clips


def main():
    if len(sys.argv) != 7:
        fail("usage: peers.py CLIP_LIST ROUNDS LOADERD_T4 LOADERD_T16 DEMUX_T4 DEMUX_T16")
    clips = parse_list(sys.argv[1])
    rounds = int(sys.argv[2])
    loaderd = {4: float(sys.argv[3]), 16: float(sys.argv[4])}
    demux = {4: float(sys.argv[5]), 16: float(sys.argv[6])}
    try:
        import numpy as np
        from PIL import Image
    except ImportError:
        print("  no peer measured: numpy and pillow are needed (pip install numpy pillow)")
        print("ratio loaderd / best peer: none measured")
        return

    def finish(rgb, c):
        """one frame of the clip: the clip's crop of full-frame RGB, resized (bilinear), flipped"""
        x, y, w, h = c.box
        out = np.asarray(Image.fromarray(np.ascontiguousarray(rgb[y:y + h, x:x + w])).resize(c.out, Image.BILINEAR))
        return out[:, ::-1] if c.flip else out

    rates, missing, versions = {}, [], []

    def bench(name, fn, T):
        dt = 1e9
        for _ in range(rounds):  # best of R, as bench_loader does
            t0 = time.process_time()
            for c in clips[T]:
                got = 0
                for path, idx in c.sources:
                    got += fn(path, idx, c)
                if got != c.T:
                    fail(f"{name}: clip at position {c.g} gave {got} frames, not {c.T}")
            dt = min(dt, time.process_time() - t0)
        rates[(name, T)] = len(clips[T]) / dt
        print(f"  {name:<30} T={T:<2} {len(clips[T]) / dt:8.1f} clips/s per core")

    readers = []
    try:
        import av
        versions.append(f"PyAV {av.__version__}")

        def pyav(path, idx, c):
            need = sorted(set(idx))
            got = 0
            with av.open(path) as f:
                s = f.streams.video[0]
                s.thread_type = "SLICE"
                fps = float(s.average_rate)
                f.seek(int(idx[0] / fps / s.time_base), stream=s, backward=True)
                for fr in f.decode(s):
                    i = round(fr.pts * s.time_base * fps)
                    if i in need:
                        finish(fr.to_ndarray(format="rgb24"), c)
                        got += idx.count(i)
                    if i >= idx[-1]:
                        break
            return got

        readers.append(("PyAV (needed frames to RGB)", pyav))
    except ImportError:
        missing.append(("PyAV", "not installed (" + INSTALL["PyAV"] + ")"))
    try:
        import decord
        versions.append(f"decord {decord.__version__}")

        def dec(path, idx, c):
            vr = decord.VideoReader(path, num_threads=1)
            frames = vr.get_batch(idx).asnumpy()  # (n, H, W, 3) full-frame RGB
            for fr in frames:
                finish(fr, c)
            return len(frames)

        readers.append(("decord (get_batch)", dec))
    except ImportError:
        missing.append(("decord", "not installed (" + INSTALL["decord"] + ")"))
    try:
        import torch
        from torchcodec.decoders import VideoDecoder
        import torchcodec
        torch.set_num_threads(1)
        versions.append(f"torchcodec {torchcodec.__version__} (torch {torch.__version__})")

        def tc(mode):
            def run(path, idx, c):
                # a decoder per clip, one FFmpeg thread, as torchcodec's docs show a data loader
                d = VideoDecoder(path, seek_mode=mode, num_ffmpeg_threads=1, dimension_order="NHWC")
                frames = d.get_frames_at(indices=idx).data.numpy()  # (n, H, W, 3)
                for fr in frames:
                    finish(fr, c)
                return len(frames)
            return run

        first = next(iter(clips.values()))[0]
        try:  # its FFmpeg libraries load at the first decoder (libavdevice and libavfilter among them)
            tc("exact")(first.sources[0][0], first.sources[0][1], first)
            readers.append(("torchcodec (exact seek)", tc("exact")))
            readers.append(("torchcodec (approximate seek)", tc("approximate")))
        except RuntimeError as e:
            missing.append(("torchcodec", f"installed but cannot decode here: {str(e).splitlines()[0]}"))
    except ImportError:
        missing.append(("torchcodec", "not installed (" + INSTALL["torchcodec"] + ")"))
    if versions:
        print("  readers: " + ", ".join(versions))
    for name, fn in readers:
        for T in sorted(clips):
            bench(name, fn, T)
    for name, why in missing:
        print(f"  {name}: {why}, skipped")
    if not rates:
        print("ratio loaderd / best peer: none measured (no peer installed)")
        return
    print("\nloaderd / peer, clips/s per core, same run, same clips; before = the demux path")
    for (name, T), r in sorted(rates.items(), key=lambda x: (x[0][1], x[0][0])):
        if T in loaderd:
            print(f"  T={T:<2} {name:<30} {r:6.1f}   loaderd {loaderd[T]:6.1f} = {loaderd[T] / r:5.2f}x"
                  f"   (before: {demux[T]:6.1f} = {demux[T] / r:5.2f}x)")
    parts = []
    for T in sorted(loaderd):
        best = max(((r, n) for (n, t), r in rates.items() if t == T), default=None)
        if best:
            short = SHORT[best[1]]
            parts.append(f"T={T} {loaderd[T]:.1f} / {best[0]:.1f} ({short}) = {loaderd[T] / best[0]:.2f}x")
    note = f" (missing: {', '.join(n for n, _ in missing)})" if missing else ""
    print(f"ratio loaderd / best peer: {', '.join(parts)}{note}")


main()
