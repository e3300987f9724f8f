#!/usr/bin/env bash
# tools/plot on a made-up run directory: a valid PNG of the right size (signature, IHDR; fully
# decoded when python3 is there), panels for eval and ringstat lines, and a clear error for a
# missing, empty or unreadable metrics file; tools/eval --task classify lines draw each head's top-1.
set -euo pipefail
[ -x tools/plot ] || { echo "tools/plot not built"; exit 77; }
d=$(mktemp -d /tmp/test_plot_run_XXXXXX)
trap 'rm -rf "$d"' EXIT
mkdir "$d/run"
awk 'BEGIN { for (s = 1; s <= 120; s++)
	printf "{\"step\":%d,\"epoch\":0,\"loss\":%.4f,\"tau\":%.4f,\"lr\":%.6f,\"step_s\":0.5,\"samples_per_s\":%.1f,\"data_wait_s\":%s}\n",
	       s, 4 * exp(-s / 40) + 0.5, 0.07 - s / 10000, 0.0005 * (s < 20 ? s / 20 : 1), 60 + s % 7, (s == 50 ? "null" : "0.01") }' \
	>"$d/run/metrics.jsonl"
printf '{"step":121,"loss":' >>"$d/run/metrics.jsonl" # a half-written line, as after a crash

# png_size FILE: "W H" from IHDR after checking the signature
png_size() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || { echo "FAIL: $1 has no PNG signature"; exit 1; }
	[ "$(head -c 16 "$1" | tail -c 4)" = IHDR ] || { echo "FAIL: $1: IHDR is not the first chunk"; exit 1; }
	echo $((0x$(head -c 20 "$1" | tail -c 4 | od -An -tx1 | tr -d ' \n'))) $((0x$(head -c 24 "$1" | tail -c 4 | od -An -tx1 | tr -d ' \n')))
}
decode() { # full decode of every chunk when python3 is available
	command -v python3 >/dev/null || return 0
	python3 - "$1" "$2" "$3" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
i, idat = 8, b""
while i < len(d):
    n, = struct.unpack(">I", d[i:i + 4]); t = d[i + 4:i + 8]; body = d[i + 8:i + 8 + n]
    assert zlib.crc32(t + body) & 0xffffffff == struct.unpack(">I", d[i + 8 + n:i + 12 + n])[0], t
    idat += body if t == b"IDAT" else b""
    i += 12 + n
w, h = int(sys.argv[2]), int(sys.argv[3])
raw = zlib.decompress(idat)
assert len(raw) == h * (w + 1), (len(raw), w, h)
assert len(set(raw[k * (w + 1) + 1:(k + 1) * (w + 1)][j] for k in range(h) for j in range(0, w, 7))) > 3  # a picture, not a blank
print("decoded", w, "x", h)
PY
}

tools/plot "$d/run" 2>"$d/log"
cat "$d/log"
grep -q "1 line(s) are not JSON objects" "$d/log"
read -r w h < <(png_size "$d/run/plot.png")
[ "$w" = 1168 ] && [ "$h" = 832 ] || { echo "FAIL: 5 panels should be 1168x832, got ${w}x$h"; exit 1; }
decode "$d/run/plot.png" "$w" "$h"

# eval and ringstat lines add their panels; --out elsewhere
printf '{"n":40,"step":0,"t2v_r1":0.025,"v2t_r1":0.05,"t2v_r5":0.125,"chance_r1":0.025}\n{"n":40,"step":120,"t2v_r1":0.3,"v2t_r1":0.25,"t2v_r5":0.6,"chance_r1":0.025}\n' \
	>"$d/run/eval.jsonl"
for t in 0 1 2 3 4; do
	printf '{"ring":"r","time":%d.5,"slots":{"total":8,"ready":%d},"occupancy_pct":%d,"consumer_wait_pct":1.5}\n' $((1700000000 + t)) $t $((t * 12))
done >"$d/run/ringstat.jsonl"
tools/plot "$d/run" --out "$d/all.png"
read -r w h < <(png_size "$d/all.png")
[ "$w" = 1168 ] && [ "$h" = 1098 ] || { echo "FAIL: 7 panels should be 1168x1098, got ${w}x$h"; exit 1; }
decode "$d/all.png" "$w" "$h"

# eval results written into the metrics lines (no eval.jsonl) make their panel too
mkdir "$d/run2"
head -n 50 "$d/run/metrics.jsonl" >"$d/run2/metrics.jsonl"
printf '{"step":50,"t2v_r1":0.1,"v2t_r1":0.1,"chance_r1":0.02}\n' >>"$d/run2/metrics.jsonl"
sed -n 51,100p "$d/run/metrics.jsonl" >>"$d/run2/metrics.jsonl"
printf '{"step":100,"t2v_r1":0.2,"v2t_r1":0.3,"chance_r1":0.02}\n' >>"$d/run2/metrics.jsonl"
tools/plot "$d/run2" 2>"$d/log2"
grep -q "6 panels from 100 steps, eval)" "$d/log2" || { echo "FAIL: no eval panel from metrics lines:"; cat "$d/log2"; exit 1; }
read -r w h < <(png_size "$d/run2/plot.png")
decode "$d/run2/plot.png" "$w" "$h"

# tools/eval --task classify lines (one per checkpoint, appended to eval.jsonl) add the classification panel
mkdir "$d/run3"
cp "$d/run/metrics.jsonl" "$d/run3/"
for s in 40 80 120; do
	printf '{"task":"classify","n":50,"views":"1x1","heads":2,"head0":"verb","head0_top1":%s,"head0_chance_top1":0.0103,"head1":"noun","head1_top1":%s,"head1_chance_top1":0.0033,"head0_confused":[[1,2,3]],"action_top1":%s,"step":%d}\n' \
		"0.$((s / 4))" "0.$((s / 6))" "0.$((s / 10))" $s
done >"$d/run3/eval.jsonl"
tools/plot "$d/run3" 2>"$d/log3"
grep -q "6 panels from 120 steps, eval)" "$d/log3" || { echo "FAIL: no classification panel:"; cat "$d/log3"; exit 1; }
read -r w h < <(png_size "$d/run3/plot.png")
[ "$w" = 1168 ] && [ "$h" = 832 ] || { echo "FAIL: 6 panels should be 1168x832, got ${w}x$h"; exit 1; }
decode "$d/run3/plot.png" "$w" "$h"
# retrieval and classification lines in one file: both panels
cat "$d/run/eval.jsonl" >>"$d/run3/eval.jsonl"
tools/plot "$d/run3" 2>"$d/log4"
grep -q "7 panels from 120 steps, eval)" "$d/log4" || { echo "FAIL: retrieval and classification panels:"; cat "$d/log4"; exit 1; }

fails() { # expected message, then the command
	local want=$1; shift
	if "$@" >"$d/o" 2>"$d/e"; then echo "FAIL: '$*' succeeded"; exit 1; fi
	grep -q -- "$want" "$d/e" || { echo "FAIL: '$*' said:"; cat "$d/e"; exit 1; }
	echo "ok: $(tail -n 1 "$d/e")"
}
mkdir "$d/empty" "$d/junk"
fails "metrics.jsonl: no such file: is $d/empty a run directory" tools/plot "$d/empty"
: >"$d/empty/metrics.jsonl"
fails "holds no metrics lines yet" tools/plot "$d/empty"
printf 'step 1 loss 3\nnot json\n' >"$d/junk/metrics.jsonl"
fails "not JSON objects with a step" tools/plot "$d/junk"
printf '{"step":1,"epoch":0}\n' >"$d/junk/metrics.jsonl"
fails "has 1 lines but none of loss, tau" tools/plot "$d/junk"
printf '{"step":1,"t2v_r1":0.5}\n' >"$d/junk/metrics.jsonl" # eval results only
fails "has 1 lines but none of loss, tau" tools/plot "$d/junk"
fails "usage: plot RUN_DIR" tools/plot
fails "unexpected argument" tools/plot "$d/run" "$d/junk"
[ ! -e "$d/empty/plot.png" ] && [ ! -e "$d/junk/plot.png" ] || { echo "FAIL: a failed run left a picture"; exit 1; }
echo "plot: valid PNGs of the expected size (retrieval and classification panels), clear errors for missing or empty metrics"
