#!/usr/bin/env bash
# End to end on real prepared data: tools/synth videos -> tools/prep chunks (B-frames) and
# manifest -> ring -> loaderd -> tools/clipdump as rank 0: 24 clips arrive, none is an error
# slot, and loaderd stops cleanly on SIGTERM.
set -u
for b in tools/synth tools/prep tools/ringctl loaderd/loaderd tools/clipdump; do
	[ -x "$b" ] || { echo "skip: $b is not built"; exit 77; }
done
dir=$(mktemp -d /tmp/test_loader_e2e_XXXXXX)
ring=t-lde2e-$$
pid=""
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	tools/ringctl destroy --ring "$ring" >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$dir/loaderd.log" ] && tail -n 20 "$dir/loaderd.log"; exit 1; }
tools/synth --out "$dir/src" --videos 2 --heldout 0 --minutes 1 >/dev/null 2>&1 || fail "synth"
tools/prep --annotations "$dir/src/train.csv" --video-root "$dir/src/videos" --out "$dir/out" --bframes 2 \
	--train-bpe 600 -j 2 >/dev/null 2>&1
rc=$?
[ $rc = 0 ] || [ $rc = 3 ] || fail "prep exited $rc"
tools/ringctl create --ring "$ring" --frames 4 --slots 16 --seed 7 --replace >/dev/null 2>&1 || fail "ringctl create"
loaderd/loaderd --ring "$ring" --manifest "$dir/out/manifest" --workers 2 >"$dir/loaderd.log" 2>&1 &
pid=$!
timeout 60 tools/clipdump --ring "$ring" --rank 0 --count 24 --out "$dir/sheets" --bpe "$dir/out/bpe_merges.txt" \
	>/dev/null 2>&1 || fail "clipdump from the ring"
n=$(ls "$dir/sheets"/pos*.png 2>/dev/null | wc -l)
[ "$n" = 24 ] || fail "$n sheets, want 24"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=""
[ $rc = 0 ] || fail "loaderd exited $rc after SIGTERM"
grep -q "stopping on signal 15: [0-9]* clips, 0 errors" "$dir/loaderd.log" || fail "loaderd reported errors"
echo "synth -> prep -> loaderd -> clipdump: 24 clips, no error slots, clean stop"
