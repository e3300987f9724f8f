#!/usr/bin/env bash
# --objective classify --init-from: only the video tower's visual.* tensors load (not visual.proj,
# which classify does not use): after a run at --lr 0 they are the file's bit for bit, the text
# tower is not; a file whose text tower has another width starts classify but is still refused for
# clip; a file lacking a visual tensor is refused naming it.
set -u
cd "$(dirname "$0")/.."
for p in tools/synth tools/prep tools/export loaderd/loaderd; do
	[ -x $p ] || { echo "skip: $p not built (needs libav)"; exit 77; }
done
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
. tests/trainer_testlib.sh
M=(--model tiny --vis-layers 1 --txt-layers 1 --threads 1)
ring() { # ring NAME: the tiny model's geometry
	"$RINGCTL" create --ring "$1" --frames 2 --height 32 --width 32 --text-len 77 --slots 32 --seed 7 --replace \
		>/dev/null 2>&1 || fail "ringctl create $1"
	TT_RINGS+=("$1")
}
src() { # src NAME [flags...]: 3 contrastive steps from the feeder, exported to $TT_DIR/NAME.safetensors
	local n=$1
	shift
	ring "$TT_TAG-$n"
	tt_feeder "$TT_TAG-$n"
	"$TRAINER" --ring "$TT_TAG-$n" "${M[@]}" "$@" "${TT_DATA[@]}" --batch-size 4 --steps 3 --run-dir "$TT_DIR/$n" \
		2>"$TT_DIR/$n.log" || fail "source run $n: $(tail -n 2 "$TT_DIR/$n.log")"
	tools/export "$TT_DIR/$n" --out "$TT_DIR/$n.safetensors" 2>>"$TT_DIR/$n.log" || fail "export $n"
}
src clip
src wide --txt-width 32
# tensors of two safetensors files: "same" names those of PREFIX with equal bytes, "diff" the others
cmp_st() { # cmp_st A B NAME...: prints "NAME same|diff" per name
	python3 - "$@" <<'PY'
import json, struct, sys
def read(p):
    b = open(p, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    return {k: b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]] for k, v in h.items() if k != "__metadata__"}
a, b = read(sys.argv[1]), read(sys.argv[2])
for k in sys.argv[3:]:
    print(k, "same" if a.get(k) == b.get(k) and k in a else "diff")
PY
}
tools/synth --out "$TT_DIR/syn" --videos 4 --heldout 0 --minutes 0.5 >/dev/null 2>&1 || fail synth
awk -F, 'NR > 1 { split($4, w, " "); print w[2] }' "$TT_DIR/syn/train.csv" | sort -u >"$TT_DIR/colours.txt"
awk -F, 'BEGIN { print "video,start,end,label" } NR > 1 { split($4, w, " "); printf "%s,%s,%s,%s\n", $1, $2, $3, w[2] }' \
	"$TT_DIR/syn/train.csv" >"$TT_DIR/labels.csv"
rows=$(($(wc -l <"$TT_DIR/labels.csv") - 1))
tools/prep --format labels-csv --classes "$TT_DIR/colours.txt" --video-root "$TT_DIR/syn/videos" \
	--bpe tests/fixtures/bpe_tiny_merges.txt -j 2 --annotations "$TT_DIR/labels.csv" --out "$TT_DIR/lab" \
	>"$TT_DIR/prep.log" 2>&1 || fail "prep: $(tail -3 "$TT_DIR/prep.log")"
ring "$TT_TAG-cl"
loaderd/loaderd --ring "$TT_TAG-cl" --manifest "$TT_DIR/lab/manifest" --workers 1 2>"$TT_DIR/loaderd.log" &
TT_PIDS+=($!)
args=("${M[@]}" --ring "$TT_TAG-cl" --manifest "$TT_DIR/lab/manifest" --dataset-size "$rows" --batch-size 4
	--objective classify --mixup 0 --cutmix 0 --lr 0 --weight-decay 0 --no-flip)

"$TRAINER" "${args[@]}" --steps 2 --init-from "$TT_DIR/clip.safetensors" --run-dir "$TT_DIR/cls" 2>"$TT_DIR/cls.log" ||
	fail "classify from the file: $(tail -n 2 "$TT_DIR/cls.log")"
grep -q "the video tower only" "$TT_DIR/cls.log" || fail "no visual-only line: $(grep init-from "$TT_DIR/cls.log")"
tools/export "$TT_DIR/cls" --out "$TT_DIR/cls.safetensors" 2>>"$TT_DIR/cls.log" || fail "export cls"
got=$(cmp_st "$TT_DIR/clip.safetensors" "$TT_DIR/cls.safetensors" visual.conv1.weight visual.class_embedding \
	visual.transformer.resblocks.0.attn.in_proj_weight visual.ln_post.weight visual.proj token_embedding.weight \
	text_projection | tr '\n' ' ')
want="visual.conv1.weight same visual.class_embedding same visual.transformer.resblocks.0.attn.in_proj_weight same "
want+="visual.ln_post.weight same visual.proj diff token_embedding.weight diff text_projection diff "
[ "$got" = "$want" ] || fail "after --lr 0 steps the tensors are: $got"

# another text width: classify starts (check-start, then a run), clip is refused
"$TRAINER" query check-start "${args[@]}" --init-from "$TT_DIR/wide.safetensors" --run-dir "$TT_DIR/w1" \
	2>"$TT_DIR/w1.log" || fail "classify refused another text width: $(tail -n 1 "$TT_DIR/w1.log")"
"$TRAINER" "${args[@]}" --steps 1 --init-from "$TT_DIR/wide.safetensors" --run-dir "$TT_DIR/w2" 2>"$TT_DIR/w2.log" ||
	fail "classify from another text width: $(tail -n 2 "$TT_DIR/w2.log")"
"$TRAINER" query check-start "${M[@]}" "${TT_DATA[@]}" --init-from "$TT_DIR/wide.safetensors" --run-dir "$TT_DIR/w3" \
	2>"$TT_DIR/w3.log" && fail "clip accepted a text tower of another width"
grep -q "text_projection (32 x 64 in the file" "$TT_DIR/w3.log" || fail "unclear clip refusal: $(tail -n 1 "$TT_DIR/w3.log")"

# a visual tensor missing from the file is named
python3 - "$TT_DIR/clip.safetensors" "$TT_DIR/nolnpost.safetensors" visual.ln_post.weight <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
out, data = {}, b""
for k, v in h.items():
    if k == "__metadata__":
        out[k] = v
    elif k != sys.argv[3]:
        t = b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]
        out[k] = dict(v, data_offsets=[len(data), len(data) + len(t)])
        data += t
j = json.dumps(out).encode()
j += b" " * (-len(j) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(j)) + j + data)
PY
"$TRAINER" query check-start "${args[@]}" --init-from "$TT_DIR/nolnpost.safetensors" --run-dir "$TT_DIR/m" \
	2>"$TT_DIR/m.log" && fail "a file without visual.ln_post.weight was accepted"
grep -q "visual.ln_post.weight is missing" "$TT_DIR/m.log" || fail "the missing tensor is not named: $(tail -n 1 "$TT_DIR/m.log")"
echo "classify --init-from: the video tower loads bit for bit (not visual.proj, not the text tower); another text width starts classify, not clip; a missing visual tensor is named"
