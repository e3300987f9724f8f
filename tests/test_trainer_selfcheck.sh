#!/usr/bin/env bash
# trainer --self-check: a launcher-like mode (no --run-dir, no ring). On the CPU backend there is
# nothing to check (it is the reference): exit 0 saying so. On --backend cuda without a device it
# refuses with the device's reason; with one, it must pass, cache the pass and log the CUDA stack
# (the check itself is test_trainer_selfcheck's, through the shim).
set -u
cd "$(dirname "$0")/.."
TRAINER=${TRAINER_BIN:-trainer/trainer}
fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export XDG_CACHE_HOME="$dir/cache"
"$TRAINER" --self-check --backend cpu 2>"$dir/log" || fail "--self-check --backend cpu exited $?: $(tail -n 2 "$dir/log")"
grep -q "nothing to check on the cpu backend" "$dir/log" || fail "no 'nothing to check' line: $(cat "$dir/log")"
[ ! -e "$dir/cache" ] || fail "the CPU backend's self-check wrote a cache"
"$TRAINER" --help | grep -q -- "--self-check" || fail "--help lacks --self-check"
"$TRAINER" --self-check --backend cuda 2>"$dir/log2"
rc=$?
if grep -q "no CUDA device" "$dir/log2"; then
	[ "$rc" = 1 ] || fail "--self-check without a device exited $rc"
	echo "no CUDA device: the device half is test_trainer_selfcheck_gpu's"
elif [ "$rc" = 0 ]; then
	grep -q "self-check: passed" "$dir/log2" || fail "exit 0 without a pass: $(tail -n 3 "$dir/log2")"
	ls "$dir/cache/avclip/"selfcheck-* >/dev/null 2>&1 || fail "a pass was not cached under \$XDG_CACHE_HOME/avclip/"
	grep -q "CUDA runtime .* from /" "$dir/log2" || fail "no CUDA runtime version and file: $(grep CUDA "$dir/log2")"
else
	cat "$dir/log2"
	grep -q "self-check FAILED" "$dir/log2" && grep -q "tools/gpu-check.sh" "$dir/log2" ||
		fail "a failing self-check without the op and the way to report it"
	fail "the device failed its self-check (the op is named above)"
fi
echo PASS
