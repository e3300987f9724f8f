#!/usr/bin/env bash
# libx264 in tools/synth and tools/prep allocates with the programs' own memalign
# (tools/x264_alloc.c: zeroed blocks, so its reads past their ends see zeros and the same source
# gives the same chunks every run), not glibc's: the dynamic linker's bindings while each encodes.
set -u
cd "$(dirname "$0")/.."
for p in tools/synth tools/prep; do
	[ -x $p ] || { echo "skip: $p not built (needs libav)"; exit 77; }
done
d=$(mktemp -d /tmp/test_x264_alloc_XXXXXX)
trap 'rm -rf "$d"' EXIT
LD_DEBUG=bindings LD_DEBUG_OUTPUT=$d/synth tools/synth --out "$d/src" --videos 1 --heldout 0 --minutes 0.12 \
	--size 160x96 --fps 10 >"$d/synth.log" 2>&1 || { tail -n 5 "$d/synth.log"; echo "FAIL: synth"; exit 1; }
LD_DEBUG=bindings LD_DEBUG_OUTPUT=$d/prep tools/prep --annotations "$d/src/train.csv" --video-root "$d/src/videos" \
	--short-side 96 -j 1 --out "$d/out" >"$d/prep.log" 2>&1 || { tail -n 5 "$d/prep.log"; echo "FAIL: prep"; exit 1; }
for p in synth prep; do
	ls "$d/$p".* >/dev/null 2>&1 || { echo "skip: no LD_DEBUG output (not glibc's dynamic linker)"; exit 77; }
	b=$(cat "$d/$p".* | grep "libx264.* symbol \`memalign'")
	[ -n "$b" ] || { echo "FAIL: $p: libx264 bound no memalign (did it encode?)"; exit 1; }
	grep -q "to tools/$p \[0\]\|to .*/tools/$p \[0\]" <<<"$b" ||
		{ echo "FAIL: $p: libx264's memalign is not the program's: $b"; exit 1; }
	echo "$p: $(sed 's/^ *[0-9]*: *//' <<<"$b" | head -n 1)"
done
echo ok
