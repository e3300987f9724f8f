#!/usr/bin/env bash
# A planted read-back that reads a metrics block's host copy before waiting for its event
# (tests/test_step_fetch.c --planted-early-read) must see the poison of the shim's asynchronous
# streams under every seed tried: a copy into pinned memory runs only when the host waits for it.
set -u
bin=${BUILD:-build}/tests/test_kcuda_step_fetch
[ -x "$bin" ] || { echo "no $bin: skipped"; exit 77; }
rc=0
for seed in 1 2 3; do
	out=$("$bin" --planted-early-read $seed 2>&1)
	r=$?
	echo "$out" | tail -n 1
	[ $r = 77 ] && exit 77
	[ $r = 0 ] || { echo "FAIL: seed $seed: the early read did not see the poison"; rc=1; }
done
exit $rc
