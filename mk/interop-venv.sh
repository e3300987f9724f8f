#!/usr/bin/env bash
# The Python the interop tests run (test_torch_clip, test_export_openclip: PyTorch and open_clip
# beside the C code): a venv with pinned torch, numpy and open_clip_torch from PyPI, made once and
# reused while its pins stay the same. Prints the venv's python on stdout (progress on stderr):
#   export AVCLIP_PYTHON=$(bash mk/interop-venv.sh)
# AVCLIP_VENV says where it lives (default ${XDG_CACHE_HOME:-~/.cache}/avclip/venv: CI clones the
# tree afresh for every run, so a cache under the clone's build/ would never be reused; ~5.5 GB,
# PyPI's torch wheel carries CUDA). A reference tool, never a runtime dependency of the programs.
set -euo pipefail
venv=${AVCLIP_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/avclip/venv}
pins="torch==2.15.0 numpy==2.4.6 open_clip_torch==3.3.0 ftfy==6.3.1"
# added to a venv of those pins without making it again (a pip install of seconds, not torch's
# gigabytes): scikit-learn for the linear probe's reference (test_eval_probe_ref)
extras="scikit-learn==1.9.1"
say() { printf 'interop-venv: %s\n' "$*" >&2; }
add_extras() {
	[ "$(cat "$venv/.extras" 2>/dev/null)" = "$extras" ] && "$venv/bin/python" -c 'import sklearn' 2>/dev/null && return 0
	say "adding $extras"
	# shellcheck disable=SC2086
	"$venv/bin/pip" install -q --disable-pip-version-check $extras >"$(dirname "$venv")/pip-extras.log" 2>&1 ||
		{ tail -n 20 "$(dirname "$venv")/pip-extras.log" >&2; say "pip install $extras failed"; return 1; }
	echo "$extras" >"$venv/.extras"
}
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.pins" 2>/dev/null)" = "$pins" ] &&
	"$venv/bin/python" -c 'import torch, numpy, open_clip' 2>/dev/null; then
	say "reusing $venv ($pins)"
	add_extras
	echo "$venv/bin/python"
	exit 0
fi
py=$(command -v python3 || true)
[ -n "$py" ] || { say "no python3 (apt-get install python3 python3-venv)"; exit 1; }
if ! "$py" -c 'import venv, ensurepip' 2>/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	say "installing python3-venv"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null 2>&1; } || true
fi
say "making $venv ($pins; a few minutes the first time)"
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$py" -m venv "$venv" >&2
log=$(dirname "$venv")/pip.log
# shellcheck disable=SC2086
"$venv/bin/pip" install -q --disable-pip-version-check $pins >"$log" 2>&1 ||
	{ tail -n 20 "$log" >&2; say "pip install failed (log: $log)"; rm -rf "$venv"; exit 1; }
"$venv/bin/python" -c 'import torch, numpy, open_clip' >&2 || { say "the venv does not import torch/open_clip"; exit 1; }
echo "$pins" >"$venv/.pins"
add_extras
say "ready: $venv"
echo "$venv/bin/python"
