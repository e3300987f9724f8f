#!/usr/bin/env bash
# Side-by-side of loaderd's product path (packet index, reads included) with PyAV and decord on
# the same synthetic 288p chunks (bench_loader's dataset), in one run: clips/s per core for 4-
# and 16-frame clips cropped to 224x224, and loaderd's ratio to each.
# Optional Python deps from PyPI (reference only, never a runtime dependency):
#   python3 -m venv build/peers-venv && build/peers-venv/bin/pip install av decord numpy pillow
# Usage: tools/bench/peers.sh [--texture | --gop G --bframes B --entropy cavlc|cabac] [--loop-filter L] [DIR]
#   default: camera-like chunks as tools/prep makes them, in build/bench-data
#   --texture: the older panning-texture chunks (GOP 16, 2 B-frames), in build/bench-texture
#   --gop/--bframes/--entropy: camera-like chunks with other prep settings, in build/bench-data-gopG-...
# Run it on a quiet machine, or pinned (taskset -c N): every figure is CPU time of one process.
set -euo pipefail
cd "$(dirname "$0")/../.."
kind=() name=data
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do
	case $1 in
	--texture) kind+=(--texture) name=texture; shift ;;
	--gop | --bframes | --entropy) kind+=("$1" "$2") name=$name-${1#--}$2; shift 2 ;;
	--loop-filter) kind+=("$1" "$2"); shift 2 ;;
	*) echo "unknown option $1"; exit 1 ;;
	esac
done
dir=${1:-build/bench-$name}
py=${PEERS_PYTHON:-}
if [ -z "$py" ]; then
	if [ -x build/peers-venv/bin/python ]; then py=build/peers-venv/bin/python; else py=python3; fi
fi
[ -x build/tests/bench_loader ] || { echo "build first: make build/tests/bench_loader"; exit 1; }
echo "== loaderd (bench_loader ${kind[*]:-} --rates-only) =="
out=$(build/tests/bench_loader "${kind[@]}" --rates-only "$dir" | tee /dev/stderr)
rate() { echo "$out" | grep "^$1 " | sed -n "s/.*T=$2 \([0-9.]*\).*/\1/p"; }
ld4=$(rate loaderd 4) ld16=$(rate loaderd 16) dm4=$(rate loaderd-demux 4) dm16=$(rate loaderd-demux 16)
echo
echo "== peers ($py) =="
"$py" - "$dir" "$ld4" "$ld16" "$dm4" "$dm16" <<'PY'
import glob, math, random, sys, time
dir = sys.argv[1]
loaderd = {4: float(sys.argv[2]), 16: float(sys.argv[3])}
demux = {4: float(sys.argv[4]), 16: float(sys.argv[5])}
rates = {}
chunks = sorted(glob.glob(dir + "/chunks/*.mp4"))
if not chunks:
    sys.exit("no chunks in " + dir)
try:
    import numpy as np
    from PIL import Image
except ImportError:
    print("skip: numpy and pillow are needed (pip install numpy pillow)")
    sys.exit(0)

def plan(rng, n, T):
    start = rng.choice([0, n // 4, n // 2])
    span = n // 2
    seg = span / T
    idx = [start + int(seg * t) + rng.randrange(max(1, int(seg * (t + 1)) - int(seg * t))) for t in range(T)]
    return [min(i, n - 1) for i in idx]

def rrc(rng, w, h):
    area = w * h
    for _ in range(10):
        ta = area * rng.uniform(0.5, 1.0)
        ar = math.exp(rng.uniform(math.log(3 / 4), math.log(4 / 3)))
        cw, ch = round(math.sqrt(ta * ar)), round(math.sqrt(ta / ar))
        if 0 < cw <= w and 0 < ch <= h:
            return rng.randint(0, w - cw), rng.randint(0, h - ch), cw, ch
    return 0, 0, w, h

def crop_resize(rgb, box):
    x, y, cw, ch = box
    return np.asarray(Image.fromarray(rgb[y:y + ch, x:x + cw]).resize((224, 224), Image.BILINEAR))

def bench(name, fn, T, clips=48, rounds=3):
    dt = 1e9
    for _ in range(rounds):  # best of 3, as bench_loader does
        rng = random.Random(1)
        t0 = time.process_time()
        for k in range(clips):
            fn(rng, chunks[k % len(chunks)], T)
        dt = min(dt, time.process_time() - t0)
    rates[(name, T)] = clips / dt
    print(f"  {name:<28} T={T:<2} {clips / dt:8.1f} clips/s per core")

try:
    import av
    def pyav(rng, path, T):
        with av.open(path) as c:
            s = c.streams.video[0]
            s.thread_type = "SLICE"
            n = s.frames
            fps = float(s.average_rate)
            idx = plan(rng, n, T)
            need = set(idx)
            box = rrc(rng, s.codec_context.width, s.codec_context.height)
            c.seek(int(idx[0] / fps / s.time_base), stream=s, backward=True)
            got = 0
            for f in c.decode(s):
                i = round(f.pts * s.time_base * fps)
                if i in need:
                    crop_resize(f.to_ndarray(format="rgb24"), box)
                    got += idx.count(i)
                if i >= idx[-1]:
                    break
    for T in (4, 16):
        bench("PyAV (needed frames to RGB)", pyav, T)
except ImportError:
    print("  PyAV: not installed (pip install av)")

try:
    import decord
    def dec(rng, path, T):
        vr = decord.VideoReader(path, num_threads=1)
        idx = plan(rng, len(vr), T)
        frames = vr.get_batch(idx).asnumpy()  # (T, H, W, 3) full-frame RGB
        box = rrc(rng, frames.shape[2], frames.shape[1])
        for fr in frames:
            crop_resize(fr, box)
    for T in (4, 16):
        bench("decord (get_batch)", dec, T)
except ImportError:
    print("  decord: not installed (pip install decord)")

if rates:
    print("\nloaderd / peer, clips/s per core, same run (goal: >= 2x decord); before = the demux path")
    for (name, T), r in sorted(rates.items(), key=lambda x: (x[0][1], x[0][0])):
        print(f"  T={T:<2} {name.split(' ')[0]:<7} {r:6.1f}   loaderd {loaderd[T]:6.1f} = {loaderd[T] / r:5.2f}x"
              f"   (before: {demux[T]:6.1f} = {demux[T] / r:5.2f}x)")
PY
