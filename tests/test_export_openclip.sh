#!/usr/bin/env bash
# An exported checkpoint (tools/export --image) in PyTorch: the twin (tools/ref/model_twin.py)
# and, where the open_clip package is installed, open_clip's CLIP loaded with strict=True give
# this project's features. Needs torch: skips (77) without it. Set AVCLIP_PYTHON to a Python
# that has torch and open_clip (e.g. a venv); otherwise python3 and /usr/bin/python3 are tried.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
[ -x tools/export ] && [ -x "$BUILD/tests/test_export_roundtrip" ] || { echo "skip: not built"; exit 77; }
py=
for p in ${AVCLIP_PYTHON:-} python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c "import torch, numpy" 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "skip: no Python with torch (set AVCLIP_PYTHON)"; exit 77; }
d=$(mktemp -d /tmp/test_export_openclip.XXXXXX)
trap 'rm -rf "$d"' EXIT
"$BUILD/tests/test_export_roundtrip" --keep "$d" >"$d/log" || { cat "$d/log"; echo "FAIL: round trip"; exit 1; }
tools/export "$d/ckpt" --out "$d/oc.safetensors" --image 2>>"$d/log" || { cat "$d/log"; echo "FAIL: export"; exit 1; }
"$py" tools/ref/openclip_check.py "$d/oc.safetensors" "$d/inputs.safetensors"
