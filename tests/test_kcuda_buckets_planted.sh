#!/usr/bin/env bash
# A planted stream-order bug in the trainer's bucketed all-reduce (tests/test_kcuda_buckets.c):
# without the caller's stream waiting for the drain, the optimizer reads gradients the comm stream
# is still writing, and the shim's asynchronous streams must report the race. 77 under a
# sanitizer (make test-san), where the kernels are not instrumented and the checker sees nothing.
set -u
bin=${BUILD:-build}/tests/test_kcuda_buckets
[ -x "$bin" ] || { echo "no $bin: skipped"; exit 77; }
[ -n "${RING_SAN:-}" ] && { echo "sanitizer build: the stream-order checker is off: skipped"; exit 77; }
out=$("$bin" --planted-no-drain 2>&1)
rc=$?
echo "$out" | grep -m 2 "kemu:"
echo "$out" | tail -n 2
echo "$out" | grep -q "stream-order race" || { echo "FAIL: no stream-order race reported"; exit 1; }
exit $rc
