#!/usr/bin/env bash
# Side-by-side of loaderd's product path (packet index, reads included) with PyAV, decord and
# torchcodec (exact and approximate seek) on the same clips in one run: clips/s per core for 4- and
# 16-frame clips cropped to 224x224, loaderd's ratio to each, and last the ratio to the best peer.
# Every reader decodes the clips of one clip list that bench_loader writes from the loader's own
# plans (chunk, frame numbers, the clip's crop), on its synthetic chunks or on any prepared dataset.
# Optional Python deps from PyPI (reference only, never a runtime dependency), e.g.
#   python3 -m venv build/peers-venv && build/peers-venv/bin/pip install av decord torchcodec numpy pillow
# (torchcodec needs its matching torch, and FFmpeg's shared libraries with libavdevice and libavfilter)
usage="usage: tools/bench/peers.sh [--texture | --gop G --bframes B --entropy cavlc|cabac] [--loop-filter L]
                           [--smoke] [DIR | --manifest M]
  default: camera-like chunks as tools/prep makes them, in build/bench-data
  --texture: the older panning-texture chunks (GOP 16, 2 B-frames), in build/bench-texture
  --gop/--bframes/--entropy: camera-like chunks with other prep settings, in build/bench-data-gopG-...
  --manifest M: the clips of any dataset tools/prep made (the first 48 training positions, seed 1)
  --smoke: 2 clips per reader, one round (make test's check that the benchmark runs; figures mean nothing)
  PEERS_PYTHON: the Python with the peers (default build/peers-venv/bin/python, else python3)
Run it on a quiet machine, or pinned (taskset -c N): every figure is CPU time of one process."
set -euo pipefail
cd "$(dirname "$0")/../.."
kind=() name=data synth_opt= manifest= count=(--clips 48 --rounds 3) rounds=3
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do
	case $1 in
	--texture) kind+=(--texture) name=texture synth_opt=$1; shift ;;
	--gop | --bframes | --entropy)
		[ $# -ge 2 ] || { echo "peers.sh: $1 needs a value" >&2; exit 2; }
		kind+=("$1" "$2") name=$name-${1#--}$2 synth_opt=$1; shift 2 ;;
	--loop-filter)
		[ $# -ge 2 ] || { echo "peers.sh: $1 needs a value" >&2; exit 2; }
		kind+=("$1" "$2"); shift 2 ;;
	--manifest)
		[ $# -ge 2 ] || { echo "peers.sh: --manifest needs a file" >&2; exit 2; }
		manifest=$2; shift 2 ;;
	--smoke) count=(--clips 2 --rounds 1) rounds=1; shift ;;
	--help | -h) echo "$usage"; exit 0 ;;
	*) echo "peers.sh: unknown option '$1'" >&2; echo "$usage" >&2; exit 2 ;;
	esac
done
if [ -n "$manifest" ]; then
	[ $# -eq 0 ] || { echo "peers.sh: give DIR or --manifest, not both" >&2; exit 2; }
	[ -z "$synth_opt" ] ||
		{ echo "peers.sh: $synth_opt shapes the synthetic chunks; --manifest takes a dataset as it is" >&2; exit 2; }
	[ -f "$manifest" ] || { echo "peers.sh: --manifest $manifest: no such file" >&2; exit 2; }
	data=(--manifest "$manifest")
else
	[ $# -le 1 ] || { echo "peers.sh: one DIR at most" >&2; exit 2; }
	data=("${1:-build/bench-$name}")
fi
py=${PEERS_PYTHON:-}
if [ -z "$py" ]; then
	if [ -x build/peers-venv/bin/python ]; then py=build/peers-venv/bin/python; else py=python3; fi
fi
bench=${BUILD:-build}/tests/bench_loader
[ -x "$bench" ] || { echo "build first: make $bench" >&2; exit 1; }
list=$(mktemp /tmp/peers-clips.XXXXXX)
trap 'rm -f "$list"' EXIT
echo "== loaderd (bench_loader ${kind[*]:-} --rates-only ${count[*]} ${data[*]}) =="
out=$("$bench" "${kind[@]}" --rates-only "${count[@]}" --clip-list "$list" "${data[@]}")
echo "$out"
rate() { echo "$out" | grep "^$1 " | sed -n "s/.*T=$2 \([0-9.]*\).*/\1/p"; }
ld4=$(rate loaderd 4) ld16=$(rate loaderd 16) dm4=$(rate loaderd-demux 4) dm16=$(rate loaderd-demux 16)
[ -n "$ld4" ] && [ -n "$ld16" ] || { echo "peers.sh: bench_loader printed no rates" >&2; exit 1; }
echo
echo "== peers ($py, the same $(wc -l <"$list") clip plans) =="
command -v "$py" >/dev/null || { echo "  no Python '$py': no peer measured"; echo "ratio loaderd / best peer: none measured"; exit 0; }
"$py" tools/bench/peers.py "$list" "$rounds" "$ld4" "$ld16" "$dm4" "$dm16"
