#!/usr/bin/env bash
# tools/eval --task classify end to end: a trainer --objective classify run on synth's labelled clips
# (head 0 the clip's colour, head 1 its action), its checkpoints' heads scored on the held-out clips
# (JSON and table, the action pair, views), appended to RUN/eval.jsonl and drawn by tools/plot; the
# probe's --save-heads read back by --heads give the probe's own figures; clear refusals.
set -u
cd "$(dirname "$0")/.."
for p in tools/synth tools/prep tools/eval tools/plot loaderd/loaderd; do
	[ -x $p ] || { echo "skip: $p not built (needs libav)"; exit 77; }
done
. tests/trainer_testlib.sh
d=$TT_DIR
. tests/eval_cls_testlib.sh
ecl_data "$d" --videos 2 --heldout 1 --minutes 0.4 || fail "the labelled data"
rows=$(($(wc -l <"$d/train.csv") - 1))
"$RINGCTL" create --ring "$TT_TAG-ec" --frames 2 --height 32 --width 32 --text-len 77 --slots 32 --seed 7 --replace \
	>/dev/null 2>&1 || fail "ringctl create"
TT_RINGS+=("$TT_TAG-ec")
loaderd/loaderd --ring "$TT_TAG-ec" --manifest "$d/train/manifest" --workers 1 2>"$d/loaderd.log" &
TT_PIDS+=($!)
"$TRAINER" --ring "$TT_TAG-ec" --manifest "$d/train/manifest" --model tiny --vis-layers 1 --txt-layers 1 --threads 1 \
	--dataset-size "$rows" --batch-size 8 --objective classify --mixup 0 --cutmix 0 --label-smoothing 0 --lr 1e-2 \
	--no-flip --warmup-steps 2 --weight-decay 0 --steps 40 --ckpt-every 20 --keep-last 0 --run-dir "$d/run" \
	2>"$d/train.log" || fail "trainer exited $?: $(tail -n 3 "$d/train.log")"
M=(--quiet)
field() { sed -n "s/.*\"$1\":\([-0-9.e]*\).*/\1/p" "$2"; }
check() { awk "BEGIN { exit !($1) }" || fail "$1"; }
fails() { # fails NEEDLE CMD...: CMD exits non-zero and says NEEDLE
	local needle=$1; shift
	if "$@" >"$d/out" 2>&1; then fail "accepted: $*"; fi
	grep -qF -- "$needle" "$d/out" || fail "'$needle' not in: $(cat "$d/out")"
	echo "ok: refused: $(grep -F -- "$needle" "$d/out" | head -1 | sed 's/.*fatal: //')"
}

# every checkpoint's heads on the held-out clips, appended for the plot
for c in "$d"/run/ckpt/ckpt-*.safetensors; do
	tools/eval --task classify --manifest "$d/heldout/manifest" --ckpt "$c" "${M[@]}" --json \
		--append "$d/run/eval.jsonl" >"$d/last.json" || fail "eval $c: $(cat "$d/last.json")"
done
[ "$(grep -c '"task":"classify"' "$d/run/eval.jsonl")" = 2 ] || fail "eval.jsonl: $(cat "$d/run/eval.jsonl")"
grep -q '"step":40' "$d/last.json" && grep -q '"head0":"label","head0_classes":'"$(wc -l <"$d/colours.txt")" "$d/last.json" &&
	grep -q '"action_top1":' "$d/last.json" || fail "JSON: $(cat "$d/last.json")"
n=$(($(wc -l <"$d/heldout.csv") - 1))
[ "$(field n "$d/last.json")" = "$n" ] || fail "n: $(field n "$d/last.json") for $n clips"
# (40 steps teach this model little: that fine-tuning beats the probe and chance is make demo-finetune's check)
echo "classify: 40 steps, colour head held-out top-1 $(field head0_top1 "$d/last.json") (chance $(field head0_chance_top1 "$d/last.json"))"
for k in head0_top1 head1_top1 action_top1 action_top5; do check "$(field $k "$d/last.json") >= 0 && $(field $k "$d/last.json") <= 1"; done
tools/eval --task classify --manifest "$d/heldout/manifest" --ckpt "$d/run" "${M[@]}" --views 2x3 --json >"$d/views.json" ||
	fail "views: $(cat "$d/views.json")"
grep -q '"views":"2x3","stride":2' "$d/views.json" || fail "views: $(cat "$d/views.json")"
tools/eval --task classify --manifest "$d/heldout/manifest" --ckpt "$d/run" "${M[@]}" >"$d/table" || fail table
grep -q "action (label, label2)" "$d/table" && grep -q "lowest recall" "$d/table" || fail "table: $(cat "$d/table")"
tools/plot "$d/run" 2>"$d/plot.log" || fail "plot: $(cat "$d/plot.log")"
grep -q "panels from 40 steps, eval)" "$d/plot.log" || fail "plot: $(cat "$d/plot.log")"

# the probe's heads written and read back: --task classify --heads scores exactly what the probe did
tools/eval --task probe --manifest "$d/heldout/manifest" --train-manifest "$d/train/manifest" --ckpt "$d/run" \
	"${M[@]}" --json --save-heads "$d/probe.heads" >"$d/probe.json" || fail "probe: $(cat "$d/probe.json")"
tools/eval --task classify --manifest "$d/heldout/manifest" --ckpt "$d/run" --heads "$d/probe.heads" "${M[@]}" \
	--json >"$d/ph.json" || fail "classify --heads: $(cat "$d/ph.json")"
for k in head0_top1 head0_top5 head0_mean_class head1_top1 head1_mean_class action_top1 action_top5; do
	[ "$(field $k "$d/probe.json")" = "$(field $k "$d/ph.json")" ] || fail "$k: probe $(field $k "$d/probe.json"), its heads $(field $k "$d/ph.json")"
done

fails "2 classification heads for the 1 label heads of $d/one/manifest" \
	tools/eval --task classify --manifest "$d/one/manifest" --ckpt "$d/run" "${M[@]}"
fails "--task classify needs heads: --ckpt of a trainer --objective classify run, or --heads FILE" \
	tools/eval --task classify --manifest "$d/heldout/manifest" --init-seed 1 "${M[@]}"
fails "--save-heads belongs to --task probe" \
	tools/eval --task classify --manifest "$d/heldout/manifest" --ckpt "$d/run" --save-heads "$d/x" "${M[@]}"
fails "no avclip.heads metadata" \
	tools/eval --task classify --manifest "$d/heldout/manifest" --ckpt "$d/run" --heads "$(ls "$d"/run/ckpt/ckpt-*.safetensors | head -1)" "${M[@]}"
echo "classify: checkpoints' heads scored and plotted, 2x3 views, probe heads round trip; 4 refusals"
