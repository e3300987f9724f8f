#!/usr/bin/env bash
# An exported checkpoint (tools/export --image) in PyTorch: the twin (tools/ref/model_twin.py)
# and, where the open_clip package is installed, open_clip's CLIP loaded with strict=True give
# this project's features. Needs torch: skips (77) without it, fails instead under
# AVCLIP_REQUIRE_INTEROP=1 (CI), which also requires open_clip (tests/python_env.sh).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
[ -x tools/export ] && [ -x "$BUILD/tests/test_export_roundtrip" ] || { echo "skip: not built"; exit 77; }
. tests/python_env.sh
need_python torch numpy
# open_clip itself is optional here, but not where the interop tests must run (CI)
req=()
[ "${AVCLIP_REQUIRE_INTEROP:-0}" = 1 ] && req=(--require-open-clip)
d=$(mktemp -d /tmp/test_export_openclip.XXXXXX)
trap 'rm -rf "$d"' EXIT
"$BUILD/tests/test_export_roundtrip" --keep "$d" >"$d/log" || { cat "$d/log"; echo "FAIL: round trip"; exit 1; }
tools/export "$d/ckpt" --out "$d/oc.safetensors" --image 2>>"$d/log" || { cat "$d/log"; echo "FAIL: export"; exit 1; }
"$py" tools/ref/openclip_check.py "$d/oc.safetensors" "$d/inputs.safetensors" "${req[@]}"
