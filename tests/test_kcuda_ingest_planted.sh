#!/usr/bin/env bash
# Planted stream-order bugs in the trainer's ingest pipeline (tests/test_kcuda_ingest.c): without
# the compute stream's wait on the batch's `ready` event (a read of a batch still being copied),
# and without the copy stream's wait on `freed` (an overwrite of a buffer the last step may still
# read), the shim's asynchronous streams must report the race (the program exits 0 only when it
# was caught). 77 where the kernels are not
# instrumented (make test-san) and the checker sees nothing.
set -u
bin=${BUILD:-build}/tests/test_kcuda_ingest
[ -x "$bin" ] || { echo "no $bin: skipped"; exit 77; }
[ -n "${RING_SAN:-}" ] && { echo "sanitizer build: the stream-order checker is off: skipped"; exit 77; }
rc=0
for bug in --planted-no-wait --planted-no-free; do
	out=$("$bin" $bug 2>&1)
	r=$?
	echo "$out" | grep -m 1 "kemu:"
	echo "$out" | tail -n 1
	echo "$out" | grep -q "stream-order race" || { echo "FAIL: $bug: no stream-order race reported"; r=1; }
	[ $r = 0 ] || rc=1
done
exit $rc
