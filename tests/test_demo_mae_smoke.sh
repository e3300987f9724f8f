#!/usr/bin/env bash
# make demo-mae's smoke mode: synth, prep, a few --objective mae steps through launch.sh, clipdump --mae
# on held-out clips, the linear probe of the pretrained and of a random encoder, export and plot, end
# to end in seconds; its last line carries both ratios (their values are not checked here: a few
# steps learn nothing).
set -u
cd "$(dirname "$0")/.."
for p in tools/synth tools/prep tools/clipdump loaderd/loaderd; do
	[ -x $p ] || { echo "skip: $p not built (needs libav)"; exit 77; }
done
out=$(bash tools/demo-mae.sh --smoke 2>&1) || { echo "$out" | tail -n 20; echo "FAIL: demo-mae --smoke exited non-zero"; exit 1; }
echo "$out"
for k in 1 2 3 4 5; do
	grep -q "^== $k/5 " <<<"$out" || { echo "FAIL: no stage $k/5"; exit 1; }
done
last=$(tail -n 1 <<<"$out")
grep -qE "^demo-mae \(smoke, not checked\): held-out reconstruction MSE / per-patch-mean baseline = [0-9.]+; probe action top-1, pretrained / random encoders' mean = [0-9.]+% / [0-9.]+%$" <<<"$last" ||
	{ echo "FAIL: the last line is not the ratio line: $last"; exit 1; }
grep -q "recon loss" <<<"$out" || { echo "FAIL: no reconstruction loss from the trainer's log"; exit 1; }
grep -qE "^   last metrics, step [0-9]+: recon loss [0-9.]+$" <<<"$out" ||
	{ echo "FAIL: the launcher's last figures are not the reconstruction loss: $(grep 'last metrics' <<<"$out")"; exit 1; }
echo "ok"
