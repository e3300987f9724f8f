#!/usr/bin/env bash
# A planted stream-order bug in the trainer's ingest pipeline (tests/test_kcuda_ingest.c): without
# the compute stream's wait on the batch's `ready` event, the shim's asynchronous streams must
# report the race (the program exits 0 only when it was caught). 77 where the kernels are not
# instrumented (make test-san) and the checker sees nothing.
set -u
bin=${BUILD:-build}/tests/test_kcuda_ingest
[ -x "$bin" ] || { echo "no $bin: skipped"; exit 77; }
[ -n "${RING_SAN:-}" ] && { echo "sanitizer build: the stream-order checker is off: skipped"; exit 77; }
out=$("$bin" --planted-no-wait 2>&1)
rc=$?
echo "$out" | grep -m 2 "kemu:"
echo "$out" | tail -n 2
echo "$out" | grep -q "stream-order race" || { echo "FAIL: no stream-order race reported"; exit 1; }
exit $rc
