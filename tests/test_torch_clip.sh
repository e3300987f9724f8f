#!/usr/bin/env bash
# tools/bench/torch_clip.py, the PyTorch side of the GPU race, on the CPU: the model equals the
# C model's twin fixture, the FastCLIP-v3 loss equals tools/ref's, a tiny training step runs with
# both losses and reports its figures as one JSON line, and a trainer whose parameter counts
# differ is refused. Skips without a Python that has torch (tests/python_env.sh; fails instead
# under AVCLIP_REQUIRE_INTEROP=1, as in CI).
set -uo pipefail
. tests/python_env.sh
need_python torch numpy
[ -x trainer/trainer ] || { echo "FAIL: trainer/trainer is not built"; exit 1; }
bash -n tools/bench/gpu_race.sh || { echo "FAIL: tools/bench/gpu_race.sh does not parse"; exit 1; }
d=$(mktemp -d /tmp/test_torch_clip_XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$py" tools/bench/torch_clip.py --check-twin tests/fixtures/model_twin.safetensors || fail "the model differs from the C model's twin"
"$py" tools/bench/torch_clip.py --check-fastclip || fail "FastCLIP-v3 differs from tools/ref/fastclip_ref.py"

for loss in fastclip-v3 openclip; do
	"$py" tools/bench/torch_clip.py --device cpu --preset tiny --batch-size 4 --steps 2 --warmup 1 --loss $loss \
		>"$d/out.json" || fail "the $loss smoke run failed"
	cat "$d/out.json"
	"$py" - "$d/out.json" "$loss" <<'PY' || fail "the $loss line is wrong"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, f"want one JSON line on stdout, got {len(lines)}"
r = json.loads(lines[0])
for k in ("clips_per_s", "step_ms", "peak_mem_gib", "tflops", "params", "trainer_params", "batch", "loss"):
    assert k in r, f"no {k}"
assert r["params"] == r["trainer_params"] > 0, "parameter counts"
assert r["clips_per_s"] > 0 and r["step_ms"] > 0 and r["tflops"] > 0 and r["peak_mem_gib"] > 0
assert r["loss"] == sys.argv[2] and r["batch"] == 4 and r["preset"] == "tiny"
PY
done

# a trainer that counts differently: refused before anything is timed
printf '#!/bin/sh\necho %s\n' "'{\"model\":\"tiny\",\"params\":1,\"visual\":1,\"text\":0,\"tensors\":1}'" >"$d/trainer"
chmod +x "$d/trainer"
if "$py" tools/bench/torch_clip.py --device cpu --preset tiny --batch-size 2 --steps 1 --warmup 0 \
	--trainer "$d/trainer" >"$d/out" 2>"$d/err"; then
	fail "a parameter-count mismatch was not refused"
fi
grep -q "parameter counts differ" "$d/err" || { cat "$d/err"; fail "the mismatch message"; }
echo "ok"
