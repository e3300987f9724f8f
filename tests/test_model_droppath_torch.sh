#!/usr/bin/env bash
# Drop path in the video tower against PyTorch: test_model_droppath --dump writes a 3-block tower's
# f64 weights, patches, per-sample branch scales (linear schedule, rate 0.5) and the C feature and
# gradients; tests/ref/droppath_ref.py recomputes them in torch (timm's DropPath with those masks).
# Skips without a Python that has torch (tests/python_env.sh; fails under AVCLIP_REQUIRE_INTEROP=1).
set -uo pipefail
cd "$(dirname "$0")/.."
. tests/python_env.sh
need_python torch numpy
bin=${BUILD:-build}/tests/test_model_droppath
[ -x "$bin" ] || { echo "FAIL: $bin is not built"; exit 1; }
d=$(mktemp -d /tmp/test_droppath_torch_XXXXXX)
trap 'rm -rf "$d"' EXIT
"$bin" --dump "$d/dp.safetensors" || { echo "FAIL: the dump"; exit 1; }
"$py" tests/ref/droppath_ref.py "$d/dp.safetensors" || { echo "FAIL: the C tower differs from torch's"; exit 1; }
echo "ok"
