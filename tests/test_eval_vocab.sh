#!/usr/bin/env bash
# tools/eval refuses a held-out manifest tokenized with another vocabulary than the model's (it
# evaluated silently wrong: R@1 16.7% for 100%), from a checkpoint and from its export alike,
# naming the tools/prep --bpe command that fixes it; one of the same vocabulary is evaluated.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
for b in tools/synth tools/prep tools/export tools/eval; do [ -x $b ] || { echo "skip: $b is not built"; exit 77; }; done
d=$TT_DIR
tools/synth --out "$d/src" --videos 0 --heldout 0 --images 8 --shard-size 8 --seed 3 >/dev/null 2>&1 || fail "synth"
tools/prep --shards "$d/src/shards" --out "$d/a" --train-bpe 600 >"$d/prep-a.log" 2>&1 || fail "prep a"
tools/prep --shards "$d/src/shards" --out "$d/b" --train-bpe 520 >"$d/prep-b.log" 2>&1 || fail "prep b"
tools/prep --shards "$d/src/shards" --out "$d/a2" --bpe "$d/a/bpe_merges.txt" >"$d/prep-a2.log" 2>&1 || fail "prep a2"
MODEL=("${TT_MODEL[@]}" --vocab 1024 --ctx-len 77)
tt_ring "$TT_TAG-a" 1 5
"$RINGCTL" create --ring "$TT_TAG-a" --frames 2 --height 16 --width 16 --text-len 77 --slots 32 --ranks 1 --seed 5 \
	--replace >/dev/null 2>&1 || fail "ringctl"
tt_feeder "$TT_TAG-a"
"$TRAINER" --ring "$TT_TAG-a" "${MODEL[@]}" "${TT_DATA[@]}" --manifest "$d/a/manifest" --batch-size 4 --steps 2 \
	--run-dir "$d/run" 2>"$d/run.log" || fail "the run: $(tail -n 3 "$d/run.log")"
tools/export "$d/run" --out "$d/w.safetensors" >"$d/export.log" 2>&1 || fail "export: $(cat "$d/export.log")"
for src in "--ckpt $d/run" "--weights $d/w.safetensors --model tiny ${MODEL[*]:2}"; do
	# shellcheck disable=SC2086
	out=$(tools/eval --manifest "$d/b/manifest" $src --quiet 2>&1) && fail "eval $src read captions of another vocabulary"
	grep -q -- "$d/b/manifest: its captions were tokenized with another vocabulary" <<<"$out" || fail "unclear ($src): $out"
	grep -q -- "--bpe $d/a/bpe_merges.txt" <<<"$out" || fail "the fix is not named ($src): $out"
	# shellcheck disable=SC2086
	tools/eval --manifest "$d/a2/manifest" $src --quiet --json >"$d/ok.json" 2>"$d/ok.err" ||
		fail "eval $src of the same vocabulary: $(tail -n 2 "$d/ok.err")"
	grep -q '"t2v_r1"' "$d/ok.json" || fail "no result ($src): $(cat "$d/ok.json")"
done
echo "ok: eval refuses another vocabulary (checkpoint and export) with the --bpe fix"
