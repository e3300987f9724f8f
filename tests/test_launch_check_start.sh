#!/usr/bin/env bash
# launch.sh asks the trainer what it would refuse (trainer query check-start) before it writes a run
# directory or starts anything: a held-out split prepared with its own vocabulary, and --init-from
# weights that do not load, are refused with the trainer's reason and leave no run directory; a
# good --init-from says what it loaded on the console before the trainers start.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep tools/export trainer/trainer loaderd/loaderd tools/ringctl
jt_tmp checkstart
tmp=$JT_TMP
jt_data "$tmp"
# the held-out split with a vocabulary of its own (no --bpe): the mistake of issue 23
tools/prep --annotations "$tmp/src/heldout.csv" --video-root "$tmp/src/videos" --out "$tmp/own" --short-side 64 \
	--chunk-sec 10 --train-bpe 520 >/dev/null 2>&1 || fail "prep own"
model=("${JT_MODEL[@]}" --threads 1 --steps 2)
out=$(tools/launch.sh 1 --manifest "$tmp/data/manifest" --run-dir "$tmp/runs/a" -- "${model[@]}" \
	--eval-manifest "$tmp/own/manifest" 2>&1) && fail "launch started with a held-out split of another vocabulary"
grep -q "the trainers would refuse to start: --eval-manifest $tmp/own/manifest: its captions were tokenized with another vocabulary" <<<"$out" ||
	fail "unclear refusal: $out"
grep -q -- "--bpe $tmp/data/bpe_merges.txt" <<<"$out" || fail "the fix is not named: $out"
[ -e "$tmp/runs/a" ] && fail "the refused start left $(find "$tmp/runs")"
pgrep -f "loaderd --ring avclip-a-" >/dev/null && fail "a loader was started"

printf 'not safetensors' >"$tmp/bad.safetensors"
out=$(tools/launch.sh 1 --manifest "$tmp/data/manifest" --run-dir "$tmp/runs/b" -- "${model[@]}" \
	--init-from "$tmp/bad.safetensors" 2>&1) && fail "launch started with --init-from of a bad file"
grep -q "the trainers would refuse to start: --init-from: $tmp/bad.safetensors" <<<"$out" || fail "unclear --init-from refusal: $out"
[ -e "$tmp/runs/b" ] && fail "the refused --init-from left $(find "$tmp/runs")"

# a good --init-from: a run's export; the console says what it loads before the trainers start
tools/launch.sh 1 --manifest "$tmp/data/manifest" --run-dir "$tmp/runs/src" -- "${model[@]}" >"$tmp/src.out" 2>&1 ||
	fail "source run: $(tail -n 5 "$tmp/src.out")"
tools/export "$tmp/runs/src" --out "$tmp/w.safetensors" >/dev/null 2>&1 || fail "export"
tools/launch.sh 1 --manifest "$tmp/data/manifest" --run-dir "$tmp/runs/c" -- "${model[@]}" \
	--init-from "$tmp/w.safetensors" >"$tmp/c.out" 2>&1 || fail "run from the export: $(tail -n 5 "$tmp/c.out")"
loaded=$(grep -n "launch: weights from $tmp/w.safetensors (--init-from): loaded" "$tmp/c.out" | cut -d: -f1)
started=$(grep -n "trainers started" "$tmp/c.out" | cut -d: -f1)
[ -n "$loaded" ] && [ -n "$started" ] && [ "$loaded" -lt "$started" ] ||
	fail "what --init-from loads is not on the console before the start: $(head -n 8 "$tmp/c.out")"
grep -q "the weights' vocabulary (bpe [0-9a-f]*) is the training manifest's" "$tmp/c.out" || fail "no vocabulary line: $(head -n 8 "$tmp/c.out")"
echo "ok: launch refuses what the trainers would, before it writes or starts anything"
