#!/usr/bin/env bash
# tools/bench/peers.sh in its smoke mode on a prepared dataset (--manifest, demo-data's seconds of
# video): bench_loader writes the clip list, every installed peer (PyAV, decord, torchcodec in both
# seek modes) decodes exactly those frames (a reader returning another count fails the run), and
# the ratio line comes last; peers not installed are named. Its figures mean nothing. Also: the
# clip list is parsed strictly, and bad arguments are refused. A few seconds.
set -u
cd "$(dirname "$0")/.."
. tests/python_env.sh
bench=${BUILD:-build}/tests/bench_loader
for p in "$bench" tools/synth tools/prep; do
	[ -x "$p" ] || { echo "skip: $p is not built (needs libav)"; exit 77; }
done
# the bench venv of peers.sh when there is one, else any Python with numpy and pillow
py=${PEERS_PYTHON:-build/peers-venv/bin/python}
if ! "$py" -c 'import numpy, PIL' 2>/dev/null; then need_python numpy PIL; fi
d=$(mktemp -d /tmp/test_peers_smoke.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
bash tools/demo-data.sh "$d/data" --smoke >"$d/data.log" 2>&1 || { tail -n 5 "$d/data.log"; fail "demo-data --smoke"; }
m=$d/data/train/manifest
PEERS_PYTHON=$py bash tools/bench/peers.sh --smoke --manifest "$m" >"$d/out" 2>"$d/err" ||
	{ cat "$d/out"; tail -n 20 "$d/err"; fail "peers.sh --smoke --manifest exited non-zero"; }
cat "$d/out"
grep -q "^loaderd (indexed path.*T=4 [0-9.]* clips/s per core, T=16 [0-9.]*" "$d/out" || fail "no loaderd rates"
grep -q "the same 4 clip plans" "$d/out" || fail "the clip list is not 2 clips at T=4 and T=16"
tail -n 1 "$d/out" | grep -q "^ratio loaderd / best peer: " || fail "the ratio line is not last"
measured=0
# the peers installed in $py (found, not imported: importing torch takes seconds)
have=" $("$py" -c 'import importlib.util as u; print(*[m for m in ("av", "decord", "torchcodec") if u.find_spec(m)])') "
check() { # module, label in the rate lines, name in the "not installed" line
	if [[ $have == *" $1 "* ]]; then
		for T in 4 16; do
			grep -q "^  $2.* T=$T  *[0-9.]* clips/s per core" "$d/out" || fail "$2: no T=$T rate"
		done
		measured=1
	else
		grep -q "^  $3: not installed" "$d/out" || fail "$3 is neither measured nor named as missing"
	fi
}
check av "PyAV (needed" PyAV
check decord "decord (get_batch)" decord
# torchcodec without its FFmpeg libraries is named as such and skipped
if ! grep -q "torchcodec: installed but cannot decode" "$d/out"; then
	check torchcodec "torchcodec (exact seek)" torchcodec
	check torchcodec "torchcodec (approximate seek)" torchcodec
fi
if [ "$measured" = 1 ]; then
	tail -n 1 "$d/out" | grep -q "T=4 [0-9.]* / [0-9.]* (.*) = [0-9.]*x, T=16 [0-9.]* / [0-9.]* (.*) = [0-9.]*x" ||
		fail "ratio line without both T: $(tail -n 1 "$d/out")"
fi
# the clip list is hostile input to the Python side: a bad line is refused by line number
printf 'clip\t4\t224\t224\t0\t160\t96\t0\t0\t200\t96\t0\t1\t/x.mp4\t1,2,3,4\n' >"$d/bad"
if "$py" tools/bench/peers.py "$d/bad" 1 1 1 1 1 >"$d/o" 2>&1; then fail "a crop outside the source was accepted"; fi
grep -q "bad line 1: crop 200x96+0+0 is not inside the 160x96 source" "$d/o" || fail "bad crop: $(cat "$d/o")"
printf 'clip\t4\t224\t224\t0\t160\t96\t0\t0\t96\t96\t0\t1\t/x.mp4\t3,2,1\n' >"$d/bad"
if "$py" tools/bench/peers.py "$d/bad" 1 1 1 1 1 >"$d/o" 2>&1; then fail "a short, unordered frame list was accepted"; fi
grep -q "bad line 1: source 0: .*non-decreasing" "$d/o" || fail "unordered frames: $(cat "$d/o")"
# arguments
bash tools/bench/peers.sh --manifest "$d/none" >"$d/o" 2>&1 && fail "a missing manifest was accepted"
grep -q "no such file" "$d/o" || fail "missing manifest: $(cat "$d/o")"
bash tools/bench/peers.sh --gop 8 --manifest "$m" >"$d/o" 2>&1 && fail "--gop with --manifest was accepted"
grep -q "shapes the synthetic chunks" "$d/o" || fail "--gop with --manifest: $(cat "$d/o")"
bash tools/bench/peers.sh --no-such >"$d/o" 2>&1 && fail "an unknown option was accepted"
grep -q "unknown option '--no-such'" "$d/o" || fail "unknown option: $(cat "$d/o")"
echo "peers.sh's smoke mode compares every installed peer on the loader's own clip plans"
