#!/usr/bin/env bash
# tools/eval --task probe end to end on synth's labelled clips (label = colour, label2 = action):
# the probe fitted on a manifest and scored on the same manifest reproduces its own train top-1
# (features, folded standardisation and scoring agree), multi-view runs, the JSON line, and the
# refusals (a manifest without labels, train and held-out heads that differ, missing or foreign flags).
set -euo pipefail
for p in tools/synth tools/prep tools/eval; do
	[ -x $p ] || { echo "$p not built (needs libav)"; exit 77; }
done
d=$(mktemp -d /tmp/test_eval_probe_e2e_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$d"' EXIT
tools/synth --out "$d/s" --videos 2 --heldout 1 --minutes 0.3 --write-labels >/dev/null 2>&1
awk -F, 'FNR > 1 { split($4, w, " "); print w[2] }' "$d/s/train.csv" "$d/s/heldout.csv" | sort -u >"$d/colours.txt"
P=(--video-root "$d/s/videos" --bpe tests/fixtures/bpe_tiny_merges.txt -j 2)
for sp in train heldout; do
	awk -F, 'BEGIN { print "video,start,end,label,label2" }
		NR > 1 { n = split($4, w, " "); a = w[4]; for (i = 5; i <= n; i++) a = a " " w[i]
			printf "%s,%s,%s,%s,%s\n", $1, $2, $3, w[2], a }' "$d/s/$sp.csv" >"$d/$sp.csv"
	tools/prep --format labels-csv --classes "$d/colours.txt,$d/s/classes-action.txt" "${P[@]}" \
		--annotations "$d/$sp.csv" --out "$d/$sp" >"$d/prep.log" 2>&1 || { cat "$d/prep.log"; exit 1; }
done
cut -d, -f1-4 "$d/heldout.csv" >"$d/one.csv" # one head only
tools/prep --format labels-csv --classes "$d/colours.txt" "${P[@]}" --annotations "$d/one.csv" --out "$d/one" \
	>"$d/prep.log" 2>&1 || { cat "$d/prep.log"; exit 1; }
tools/prep "${P[@]}" --annotations "$d/s/heldout.csv" --out "$d/plain" >"$d/prep.log" 2>&1 || { cat "$d/prep.log"; exit 1; }
M=(--init-seed 1 --model tiny --vis-layers 1 --txt-layers 1 --quiet)
field() { sed -n "s/.*\"$1\":\([-0-9.e]*\).*/\1/p" "$2"; }
check() { awk "BEGIN { exit !($1) }" || { echo "FAIL: $1"; exit 1; }; }
fails() { # fails NEEDLE CMD...: CMD exits non-zero and says NEEDLE
	local needle=$1; shift
	if "$@" >"$d/out" 2>&1; then echo "FAIL: accepted: $*"; exit 1; fi
	grep -qF -- "$needle" "$d/out" || { echo "FAIL: '$needle' not in: $(cat "$d/out")"; exit 1; }
	echo "ok: refused: $(grep -F -- "$needle" "$d/out" | head -1)"
}

# fitted and scored on the same clips: the held-out top-1 is the fit's own train top-1
tools/eval --task probe --manifest "$d/train/manifest" --train-manifest "$d/train/manifest" "${M[@]}" --json \
	--append "$d/eval.jsonl" >"$d/self.json"
n=$(($(wc -l <"$d/train.csv") - 1))
[ "$(field n "$d/self.json")" = "$n" ] && [ "$(field n_train "$d/self.json")" = "$n" ] || { cat "$d/self.json"; exit 1; }
grep -q '"task":"probe"' "$d/self.json" && grep -q '"head0":"label"' "$d/self.json" && grep -q '"head1":"label2"' "$d/self.json" &&
	grep -q '"views":"1x1"' "$d/self.json" && grep -q '"head0_probe_converged":true' "$d/self.json" ||
	{ echo "FAIL: $(cat "$d/self.json")"; exit 1; }
for k in 0 1; do
	check "$(field head${k}_top1 "$d/self.json") == $(field head${k}_train_top1 "$d/self.json")"
	check "$(field head${k}_top1 "$d/self.json") > $(field head${k}_chance_top1 "$d/self.json")"
done
cmp -s "$d/self.json" "$d/eval.jsonl" || { echo "FAIL: --append wrote another line"; exit 1; }
[ "$(field head0_classes "$d/self.json")" = "$(wc -l <"$d/colours.txt")" ] || { echo "FAIL: head0_classes"; exit 1; }

# held-out clips, several views (2 temporal clips, frames 2 apart), the table
tools/eval --task probe --manifest "$d/heldout/manifest" --train-manifest "$d/train/manifest" "${M[@]}" \
	--views 2x1 --json >"$d/views.json"
grep -q '"views":"2x1","stride":2' "$d/views.json" || { echo "FAIL: $(cat "$d/views.json")"; exit 1; }
tools/eval --task probe --manifest "$d/heldout/manifest" --train-manifest "$d/train/manifest" "${M[@]}" >"$d/table"
grep -q "most confused\|no mistakes" "$d/table" && grep -q "chance 1 / 5" "$d/table" || { cat "$d/table"; exit 1; }

fails "has no class labels: prepare it with tools/prep --format" \
	tools/eval --task probe --manifest "$d/plain/manifest" --train-manifest "$d/train/manifest" "${M[@]}"
fails "the train manifest $d/train/manifest labels 2 heads" \
	tools/eval --task probe --manifest "$d/one/manifest" --train-manifest "$d/train/manifest" "${M[@]}"
fails "has no class labels" \
	tools/eval --task probe --manifest "$d/heldout/manifest" --train-manifest "$d/plain/manifest" "${M[@]}"
fails "--task probe needs --train-manifest" tools/eval --task probe --manifest "$d/heldout/manifest" "${M[@]}"
fails "--train-manifest belongs to --task probe" \
	tools/eval --manifest "$d/heldout/manifest" --train-manifest "$d/train/manifest" "${M[@]}"
fails "the spatial crops are 1 (centre) or 3" \
	tools/eval --task probe --manifest "$d/heldout/manifest" --train-manifest "$d/train/manifest" "${M[@]}" --views 2x2
fails "reads its labels from the manifests" tools/eval --task probe --manifest "$d/heldout/manifest" \
	--train-manifest "$d/train/manifest" "${M[@]}" --classes "$d/colours.txt"
echo "probe: self-scored top-1 = train top-1 for both heads, 2x1 views, JSON and table; 7 refusals"
