#!/usr/bin/env bash
# tools/demo-data.sh DIR: the synthetic dataset of the demo and of bench-learn, made once:
# 8 training + 4 held-out videos of 2 minutes (held-out captions pair colours and actions never
# seen in training), chunked and indexed into DIR/train/manifest and DIR/heldout/manifest.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:?usage: tools/demo-data.sh DIR}
if [ -s "$data/heldout/manifest" ] && tools/prep --verify "$data/heldout/manifest" >/dev/null 2>&1; then
	echo "dataset already prepared in $data"
	exit 0
fi
tools/synth --out "$data/src" --videos 8 --heldout 4 --minutes 2 --scene-seed 1
tools/prep --annotations "$data/src/train.csv" --video-root "$data/src/videos" --out "$data/train"
tools/prep --annotations "$data/src/heldout.csv" --video-root "$data/src/videos" --out "$data/heldout" \
	--bpe "$data/train/bpe_merges.txt"
