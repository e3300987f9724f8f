#!/usr/bin/env bash
# The trainer refuses a vocabulary mismatch at start, with the tools/prep --bpe command that
# fixes it and before it makes a run directory: --eval-manifest prepared with its own vocabulary
# (not the --manifest's), and --init-from weights that record another vocabulary than --manifest's
# (an export of a run on other captions), and a resume on a manifest of another vocabulary than the
# checkpoint's. query check-start refuses the same and makes nothing; the matching vocabulary passes,
# and the checkpoint records it (avclip.vocab).
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
for b in tools/synth tools/prep tools/export; do [ -x $b ] || { echo "skip: $b is not built"; exit 77; }; done
d=$TT_DIR
tools/synth --out "$d/src" --videos 0 --heldout 0 --images 8 --shard-size 8 --seed 3 >/dev/null 2>&1 || fail "synth"
tools/prep --shards "$d/src/shards" --out "$d/a" --train-bpe 600 >"$d/prep-a.log" 2>&1 || fail "prep a: $(tail -n 2 "$d/prep-a.log")"
tools/prep --shards "$d/src/shards" --out "$d/b" --train-bpe 520 >"$d/prep-b.log" 2>&1 || fail "prep b: $(tail -n 2 "$d/prep-b.log")"
tools/prep --shards "$d/src/shards" --out "$d/a2" --bpe "$d/a/bpe_merges.txt" >"$d/prep-a2.log" 2>&1 || fail "prep a2"
MODEL=("${TT_MODEL[@]}" --vocab 1024)

# query check-start: refused with the fix, nothing made
out=$("$TRAINER" query check-start "${MODEL[@]}" "${TT_DATA[@]}" --manifest "$d/a/manifest" --eval-manifest "$d/b/manifest" \
	--run-dir "$d/run-check" 2>&1) && fail "query check-start passed another vocabulary: $out"
grep -q -- "--eval-manifest $d/b/manifest: its captions were tokenized with another vocabulary" <<<"$out" || fail "unclear: $out"
grep -q -- "--bpe $d/a/bpe_merges.txt" <<<"$out" || fail "the fix (--bpe TRAIN/bpe_merges.txt) is not named: $out"
[ ! -e "$d/run-check" ] || fail "query check-start made a run directory"
"$TRAINER" query check-start "${MODEL[@]}" "${TT_DATA[@]}" --manifest "$d/a/manifest" --eval-manifest "$d/a2/manifest" \
	--run-dir "$d/run-check" >"$d/check-ok.log" 2>&1 || fail "query check-start refused the same vocabulary: $(tail -n 2 "$d/check-ok.log")"
grep -q "check-start: the run can start" "$d/check-ok.log" || fail "no verdict: $(cat "$d/check-ok.log")"

# a real start: refused before the ring is opened and the run directory made
out=$("$TRAINER" --ring "$TT_TAG-none" "${MODEL[@]}" "${TT_DATA[@]}" --manifest "$d/a/manifest" \
	--eval-manifest "$d/b/manifest" --run-dir "$d/run-refused" 2>&1) && fail "the trainer started with another vocabulary"
grep -q "another vocabulary" <<<"$out" || fail "unclear: $out"
[ ! -e "$d/run-refused" ] || fail "the refused start left $d/run-refused behind"

# a run on manifest a records its vocabulary; its export carries it
tt_ring "$TT_TAG-a" 1 5
tt_feeder "$TT_TAG-a"
"$TRAINER" --ring "$TT_TAG-a" "${MODEL[@]}" "${TT_DATA[@]}" --manifest "$d/a/manifest" --batch-size 4 --steps 2 \
	--run-dir "$d/run-a" 2>"$d/run-a.log" || fail "the run on a: $(tail -n 3 "$d/run-a.log")"
hash_a=$(tools/prep --info "$d/a/manifest" | sed -n 's/^merges *bpe \([0-9a-f]*\).*/\1/p')
grep -a -q "\"avclip.vocab\":\"$hash_a\"" "$d/run-a/ckpt/$(cat "$d/run-a/ckpt/LATEST")" || fail "the checkpoint does not record vocabulary $hash_a"
tools/export "$d/run-a" --out "$d/a.safetensors" >"$d/export.log" 2>&1 || fail "export: $(cat "$d/export.log")"
# resuming it on a manifest of another vocabulary: refused, naming the run's merges
out=$("$TRAINER" query check-start "${MODEL[@]}" "${TT_DATA[@]}" --manifest "$d/b/manifest" --batch-size 4 --steps 4 --resume \
	--run-dir "$d/run-a" 2>&1) && fail "a resume on another vocabulary passed: $out"
grep -q -- "cannot resume on --manifest $d/b/manifest: the checkpoint of step 2 .* vocabulary bpe $hash_a" <<<"$out" ||
	fail "unclear resume refusal: $out"
grep -q -- "--bpe $d/a/bpe_merges.txt" <<<"$out" || fail "the resume refusal does not name the run's merges: $out"

# --init-from weights of vocabulary a into a run on manifest b: refused, nothing made
out=$("$TRAINER" query check-start "${MODEL[@]}" "${TT_DATA[@]}" --manifest "$d/b/manifest" --init-from "$d/a.safetensors" \
	--run-dir "$d/run-init" 2>&1) && fail "query check-start passed --init-from of another vocabulary: $out"
grep -q -- "--init-from $d/a.safetensors: the weights read captions of vocabulary bpe $hash_a" <<<"$out" || fail "unclear: $out"
grep -q -- "--bpe FILE" <<<"$out" || fail "the fix is not named: $out"
grep -q "weights from $d/a.safetensors (--init-from): loaded [0-9]* of the model's [0-9]* tensors" <<<"$out" ||
	fail "query check-start does not say what --init-from loads: $out"
tt_ring "$TT_TAG-b" 1 5
out=$("$TRAINER" --ring "$TT_TAG-b" "${MODEL[@]}" "${TT_DATA[@]}" --manifest "$d/b/manifest" --init-from "$d/a.safetensors" \
	--batch-size 4 --steps 2 --run-dir "$d/run-init" 2>&1) && fail "the trainer started from weights of another vocabulary"
grep -q "the weights read captions of vocabulary" <<<"$out" || fail "unclear: $out"
[ ! -e "$d/run-init" ] || fail "the refused --init-from left $d/run-init behind"
# the same vocabulary: loads, and says so
"$TRAINER" query check-start "${MODEL[@]}" "${TT_DATA[@]}" --manifest "$d/a2/manifest" --init-from "$d/a.safetensors" \
	--run-dir "$d/run-init" >"$d/init-ok.log" 2>&1 || fail "--init-from of the same vocabulary refused: $(tail -n 2 "$d/init-ok.log")"
grep -q "the weights' vocabulary (bpe $hash_a) is the training manifest's" "$d/init-ok.log" || fail "no vocabulary line: $(cat "$d/init-ok.log")"
grep -q "τ reset to" "$d/init-ok.log" || fail "no τ line"
echo "ok: another vocabulary is refused at start with the --bpe fix, and no run directory is left"
