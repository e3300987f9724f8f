#!/usr/bin/env bash
# A masked autoencoder's encoder goes on elsewhere: tools/export writes an --objective mae checkpoint
# as the dual encoder's weights (its encoder; the rest an untrained initialisation), a clip run and a
# classify run (labelled clips through prep and loaderd) start from it by --init-from, and after
# --lr 0 steps their video encoders are the checkpoint's, bit for bit; a model of another tubelet or
# pooling (the export records --pool mean, VideoMAE's feature) is refused naming it.
set -u
cd "$(dirname "$0")/.."
for p in tools/synth tools/prep tools/export loaderd/loaderd; do
	[ -x $p ] || { echo "skip: $p not built (needs libav)"; exit 77; }
done
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
. tests/trainer_testlib.sh
M=(--model tiny --vis-layers 1 --txt-layers 1 --threads 1 --frames 2 --tubelet 2 --pool mean)
ring() { # ring NAME: 2 frames of 32x32, the tiny model's
	"$RINGCTL" create --ring "$1" --frames 2 --height 32 --width 32 --text-len 77 --slots 32 --seed 7 --replace \
		>/dev/null 2>&1 || fail "ringctl create $1"
	TT_RINGS+=("$1")
}
ring "$TT_TAG-mae"
tt_feeder "$TT_TAG-mae"
"$TRAINER" --ring "$TT_TAG-mae" "${M[@]}" --objective mae --batch-size 4 --steps 3 --lr 1e-3 --run-dir "$TT_DIR/mae" \
	2>"$TT_DIR/mae.log" || fail "the mae run: $(tail -n 2 "$TT_DIR/mae.log")"
tools/export "$TT_DIR/mae" --out "$TT_DIR/mae.safetensors" 2>"$TT_DIR/export.log" || fail "export: $(cat "$TT_DIR/export.log")"
grep -q "masked autoencoder's checkpoint" "$TT_DIR/export.log" || fail "export does not say what it wrote"

# the checkpoint's encoder tensors (model.params at the encoder's offsets) against a file's
enc_same() { # enc_same FILE: "same" when every visual.* tensor but visual.proj has the checkpoint's bytes
	python3 - "$TT_DIR/mae/ckpt/ckpt-00000003.safetensors" "$1" <<'PY'
import json, struct, sys
def read(p):
    b = open(p, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    return h, b[8 + n:]
ch, cb = read(sys.argv[1])
fh, fb = read(sys.argv[2])
o = ch["model.params"]["data_offsets"][0]
off, bad, n = 0, [], 0
names = [k for k in fh if k.startswith("visual.") and k != "visual.proj"]
# the encoder's layout order is the export's order of visual.* (model_layout), from offset 0
order = sorted(names, key=lambda k: fh[k]["data_offsets"][0])
for k in order:
    a, b = fh[k]["data_offsets"]
    if fb[a:b] != cb[o + off:o + off + (b - a)]:
        bad.append(k)
    off += b - a
    n += 1
print("same" if not bad and n > 5 else "diff " + " ".join(bad[:3]))
PY
}
[ "$(enc_same "$TT_DIR/mae.safetensors")" = same ] || fail "the export's encoder is not the checkpoint's: $(enc_same "$TT_DIR/mae.safetensors")"

# a clip run from it, at --lr 0: its encoder stays the checkpoint's
ring "$TT_TAG-clip"
tt_feeder "$TT_TAG-clip"
"$TRAINER" --ring "$TT_TAG-clip" "${M[@]}" "${TT_DATA[@]}" --batch-size 4 --steps 2 --lr 0 --weight-decay 0 \
	--init-from "$TT_DIR/mae.safetensors" --run-dir "$TT_DIR/clip" 2>"$TT_DIR/clip.log" ||
	fail "clip from the mae export: $(tail -n 2 "$TT_DIR/clip.log")"
tools/export "$TT_DIR/clip" --out "$TT_DIR/clip.safetensors" 2>>"$TT_DIR/clip.log" || fail "export clip"
[ "$(enc_same "$TT_DIR/clip.safetensors")" = same ] || fail "the clip run's encoder: $(enc_same "$TT_DIR/clip.safetensors")"

# a classify run from it, on labelled clips (the label: synth's colour)
tools/synth --out "$TT_DIR/syn" --videos 2 --heldout 0 --minutes 0.25 >/dev/null 2>&1 || fail synth
awk -F, 'NR > 1 { split($4, w, " "); print w[2] }' "$TT_DIR/syn/train.csv" | sort -u >"$TT_DIR/colours.txt"
awk -F, 'BEGIN { print "video,start,end,label" } NR > 1 { split($4, w, " "); printf "%s,%s,%s,%s\n", $1, $2, $3, w[2] }' \
	"$TT_DIR/syn/train.csv" >"$TT_DIR/labels.csv"
tools/prep --format labels-csv --classes "$TT_DIR/colours.txt" --video-root "$TT_DIR/syn/videos" \
	--bpe tests/fixtures/bpe_tiny_merges.txt -j 2 --annotations "$TT_DIR/labels.csv" --out "$TT_DIR/lab" \
	>"$TT_DIR/prep.log" 2>&1 || fail "prep: $(tail -3 "$TT_DIR/prep.log")"
ring "$TT_TAG-cl"
loaderd/loaderd --ring "$TT_TAG-cl" --manifest "$TT_DIR/lab/manifest" --workers 1 2>"$TT_DIR/loaderd.log" &
TT_PIDS+=($!)
rows=$(($(wc -l <"$TT_DIR/labels.csv") - 1))
args=("${M[@]}" --ring "$TT_TAG-cl" --manifest "$TT_DIR/lab/manifest" --dataset-size "$rows" --batch-size 4
	--objective classify --weight-decay 0 --no-flip)
"$TRAINER" "${args[@]}" --mixup 0 --cutmix 0 --steps 2 --lr 0 --init-from "$TT_DIR/mae.safetensors" --run-dir "$TT_DIR/cls" \
	2>"$TT_DIR/cls.log" || fail "classify from the mae export: $(tail -n 2 "$TT_DIR/cls.log")"
grep -q "the video tower only" "$TT_DIR/cls.log" || fail "no visual-only line: $(grep init-from "$TT_DIR/cls.log")"
tools/export "$TT_DIR/cls" --out "$TT_DIR/cls.safetensors" 2>>"$TT_DIR/cls.log" || fail "export cls"
[ "$(enc_same "$TT_DIR/cls.safetensors")" = same ] || fail "the classify run's encoder: $(enc_same "$TT_DIR/cls.safetensors")"
# and it trains from there, with the default Mixup/CutMix on its tubelets of 2 frames
"$TRAINER" "${args[@]}" --steps 6 --lr 1e-3 --init-from "$TT_DIR/mae.safetensors" --run-dir "$TT_DIR/cls2" \
	2>"$TT_DIR/cls2.log" || fail "classify training from the mae export: $(tail -n 2 "$TT_DIR/cls2.log")"
[ "$(wc -l <"$TT_DIR/cls2/metrics.jsonl")" = 6 ] || fail "the classify run did not train 6 steps"

# a model of tubelet 1 does not take it: the shapes are named
"$TRAINER" query check-start "${args[@]}" --tubelet 1 --init-from "$TT_DIR/mae.safetensors" --run-dir "$TT_DIR/t1" \
	2>"$TT_DIR/t1.log" && fail "a tubelet-1 model took a tubelet-2 encoder"
grep -q "vision.tubelet is 2, this model's --tubelet is 1" "$TT_DIR/t1.log" || fail "unclear refusal: $(tail -n 1 "$TT_DIR/t1.log")"
# nor one of the class token's feature: the pooling the encoder was pretrained for is named
"$TRAINER" query check-start "${args[@]}" --pool cls --init-from "$TT_DIR/mae.safetensors" --run-dir "$TT_DIR/p1" \
	2>"$TT_DIR/p1.log" && fail "a class-token model took a mean-pooled encoder"
grep -q "vision.pool is mean, this model's --pool is cls" "$TT_DIR/p1.log" || fail "unclear refusal: $(tail -n 1 "$TT_DIR/p1.log")"
echo "mae export: its encoder loads bit for bit into clip and classify runs (and classify trains from it); tubelet 1 and --pool cls refused"
