#!/usr/bin/env bash
# The ring demo (make demo-ring): 3 producer processes fill a shared-memory ring while 2 consumer
# processes check every clip; producers are SIGKILLed and restarted at random; ringstat watches.
# It stands in for the full training demo until loaderd and the trainer land.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
ring=${AVCLIP_RING:-avclip-demo}
positions=${POSITIONS:-60000}
for bin in "$build/tests/test_ring_kill" tools/ringstat; do
	[ -x "$bin" ] || { echo "demo: $bin is not built (run make)"; exit 1; }
done
echo "demo: 3 producers -> ring '$ring' -> 2 consumers, $positions positions, producers killed every 20-60 ms"
"$build/tests/test_ring_kill" --ring "$ring" --positions "$positions" --min-kills 1 --keep &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f /dev/shm/$ring' EXIT
for _ in $(seq 50); do [ -e "/dev/shm/$ring" ] && break; sleep 0.1; done
tools/ringstat --ring "$ring" 1 &
watch=$!
status=0
wait $pid || status=$?
kill $watch 2>/dev/null || true
wait $watch 2>/dev/null || true
echo "# totals since the ring was created:"
tools/ringstat --ring "$ring" -n | tail -n 1
[ $status = 0 ] && echo "demo: every position arrived once, in order, intact" || echo "demo: FAILED (see above)"
exit $status
