#!/usr/bin/env bash
# Input files read by name are refused, never waited on, when a FIFO sits at the path (planted, or a
# typo naming a pipe): prep's annotations, the trainer's --config, --init-from and checkpoint marker,
# plot's metrics. Each must exit non-zero within seconds, saying the path is not a regular file.
set -u
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
for p in tools/prep trainer/trainer tools/plot; do [ -x "$p" ] || { echo "skip: $p is not built"; exit 77; }; done
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkfifo "$d/fifo"
mkdir -p "$d/videos" "$d/run/ckpt" "$d/plotrun"
mkfifo "$d/run/ckpt/LATEST" "$d/plotrun/metrics.jsonl"
n=0
refused() { # refused WHAT COMMAND...
	local what=$1 out st
	shift
	out=$(timeout 20 "$@" 2>&1)
	st=$?
	[ $st = 124 ] && fail "$what: blocked on the FIFO (timed out)"
	[ $st = 0 ] && fail "$what: succeeded on a FIFO"
	grep -q "not a regular file" <<<"$out" || fail "$what: unclear message: $(tail -n 2 <<<"$out")"
	n=$((n + 1))
}
refused "prep --annotations" tools/prep --annotations "$d/fifo" --video-root "$d/videos" --out "$d/out"
refused "trainer --config" trainer/trainer --config "$d/fifo" --model tiny
refused "trainer --init-from" trainer/trainer query check-start --model tiny --dataset-size 10 --init-from "$d/fifo" --run-dir "$d/r"
refused "the checkpoint marker" trainer/trainer query resume-position --run-dir "$d/run"
refused "plot's metrics" tools/plot "$d/plotrun"
echo "ok: $n readers refuse a FIFO at their input path at once"
