#!/usr/bin/env bash
# tools/eval on a held-out split with a damaged video: the samples that cannot be decoded are
# skipped, counted on the console and in the report (table and JSON), and every figure is over
# the others; --strict stops at the first, naming it, as before.
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep tools/eval
jt_tmp eval-damaged
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 1 --heldout 2 --minutes 0.3 --size 96x64 --scene-seed 3 >/dev/null 2>&1 || fail "synth"
tools/prep --annotations "$tmp/src/heldout.csv" --video-root "$tmp/src/videos" --out "$tmp/ho" --short-side 64 \
	--chunk-sec 10 --train-bpe 600 >/dev/null 2>&1 || fail "prep"
m=$tmp/ho/manifest
vocab=$(tools/prep --info "$m" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p')
model=(--init-seed 1 --model tiny --vocab "$vocab" --frames 2 --image-size 32 --patch 16 --quiet)
JT_FAIL_LOGS="$tmp/a.err $tmp/b.err"
tools/eval --manifest "$m" "${model[@]}" --json >"$tmp/clean.json" 2>"$tmp/clean.err" || fail "clean eval: $(cat "$tmp/clean.err")"
n=$(sed -n 's/.*"n":\([0-9]*\).*/\1/p' "$tmp/clean.json")
# one chunk of the first held-out video cut to a tenth: its samples cannot be decoded
chunk=$(find "$tmp/ho" -name '*.mp4' | sort | head -n 1)
truncate -s $(($(stat -c %s "$chunk") / 10)) "$chunk"
tools/eval --manifest "$m" "${model[@]}" >"$tmp/a.out" 2>"$tmp/a.err" || fail "one damaged video ended the evaluation"
grep -qE "warn: [0-9]+ of $n samples could not be decoded and are left out of every figure \(the first: sample [0-9]+: " \
	"$tmp/a.err" || fail "no console line counting the skipped samples"
k=$(sed -n 's/.*warn: \([0-9]*\) of .*/\1/p' "$tmp/a.err")
[ "$k" -ge 1 ] && [ "$k" -lt "$n" ] || fail "skipped $k of $n"
grep -q "^retrieval, $((n - k)) samples" "$tmp/a.out" || fail "the figures are not over the $((n - k)) others: $(head -n 1 "$tmp/a.out")"
grep -q "($k damaged samples skipped, in no figure; the first: sample" "$tmp/a.out" || fail "no report line for the skipped samples"
tools/eval --manifest "$m" "${model[@]}" --json >"$tmp/a.json" 2>/dev/null || fail "eval --json"
grep -q "\"n\":$((n - k)),.*\"skipped\":$k," "$tmp/a.json" || fail "the JSON lacks n and skipped: $(cat "$tmp/a.json")"
# --strict: the old behaviour
tools/eval --manifest "$m" "${model[@]}" --strict >/dev/null 2>"$tmp/b.err" && fail "--strict went past a damaged sample"
grep -q "fatal: sample [0-9]*: .*--strict" "$tmp/b.err" || fail "--strict does not name the sample: $(cat "$tmp/b.err")"
echo "ok: $k of $n damaged samples skipped with a count on the console, in the table and the JSON; --strict stops"
