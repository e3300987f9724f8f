#!/usr/bin/env bash
# A chunk file replaced by a FIFO (a hostile manifest, or a dataset folder someone else can write)
# blocks none of the tools that read chunks: prep --verify names it, eval skips its samples with
# a count, clipdump --manifest draws them as error slots; each ends well within its time limit
# (each used to block in open() for good); so is a FIFO given as the manifest or the vocabulary, and
# one among prep --shards' tar shards.
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep tools/eval tools/clipdump
jt_tmp fifo-chunk
tmp=$JT_TMP
tools/synth --out "$tmp/src" --videos 1 --heldout 2 --minutes 0.3 --images 8 --size 96x64 --scene-seed 3 >/dev/null 2>&1 ||
	fail "synth"
tools/prep --annotations "$tmp/src/heldout.csv" --video-root "$tmp/src/videos" --out "$tmp/ho" --short-side 64 \
	--chunk-sec 10 --train-bpe 600 >/dev/null 2>&1 || fail "prep"
m=$tmp/ho/manifest
vocab=$(tools/prep --info "$m" | sed -n 's/.*vocabulary \([0-9]*\).*/\1/p')
chunk=$(find "$tmp/ho" -name '*.mp4' | sort | head -n 1)
rm -f "$chunk" && mkfifo "$chunk" || fail "mkfifo"
JT_FAIL_LOGS="$tmp/verify.out $tmp/eval.err $tmp/dump.out"
timeout 60 tools/prep --verify "$m" >"$tmp/verify.out" 2>&1
rc=$?
[ $rc = 124 ] && fail "prep --verify blocked on the FIFO chunk"
[ $rc = 0 ] && fail "prep --verify passed a manifest whose chunk is a FIFO"
grep -q "$(basename "$chunk") is not a regular file" "$tmp/verify.out" || fail "prep --verify does not name the FIFO: $(cat "$tmp/verify.out")"
timeout 120 tools/eval --manifest "$m" --init-seed 1 --model tiny --vocab "$vocab" --frames 2 --image-size 32 --patch 16 \
	--quiet >"$tmp/eval.out" 2>"$tmp/eval.err"
rc=$?
[ $rc = 124 ] && fail "eval blocked on the FIFO chunk"
[ $rc = 0 ] || fail "eval failed (exit $rc) instead of skipping the FIFO's samples"
grep -q "not a regular file (a FIFO)" "$tmp/eval.err" || fail "eval does not say the chunk is a FIFO"
timeout 60 tools/clipdump --manifest "$m" --positions 0-15 --frames 2 --image-size 32 --out "$tmp/dump" >"$tmp/dump.out" 2>&1
rc=$?
[ $rc = 124 ] && fail "clipdump --manifest blocked on the FIFO chunk"
grep -q "not a regular file (a FIFO)" "$tmp/dump.out" || fail "clipdump does not report the FIFO chunk (exit $rc)"
# a FIFO given as the manifest or the vocabulary is refused at once too
mkfifo "$tmp/fifo" || fail "mkfifo"
timeout 20 tools/prep --info "$tmp/fifo" >"$tmp/info.out" 2>&1
rc=$?
[ $rc = 124 ] && fail "prep --info blocked on a FIFO manifest"
grep -q "not a regular file" "$tmp/info.out" || fail "prep --info on a FIFO: $(cat "$tmp/info.out")"
timeout 20 tools/clipdump --manifest "$m" --bpe "$tmp/fifo" --positions 0 --frames 2 --image-size 32 --out "$tmp/dump2" \
	>"$tmp/bpe.out" 2>&1
rc=$?
[ $rc = 124 ] && fail "clipdump blocked on a FIFO --bpe"
[ $rc = 0 ] && fail "clipdump took a FIFO as --bpe"
# a FIFO among prep --shards' tar shards is one line of the report (exit 3), the rest is prepared
mkfifo "$tmp/src/shards/train-00009.tar" || fail "mkfifo"
timeout 60 tools/prep --shards "$tmp/src/shards" --out "$tmp/img" --train-bpe 600 >"$tmp/shards.out" 2>&1
rc=$?
[ $rc = 124 ] && fail "prep --shards blocked on a FIFO shard"
[ $rc = 3 ] || fail "prep --shards with a FIFO shard exited $rc, want 3: $(tail -n 3 "$tmp/shards.out")"
grep -q "train-00009.tar: cannot read: not a regular file" "$tmp/img/prep-report.txt" || fail "the report does not name the FIFO shard"
echo "ok: prep --verify, eval and clipdump report a FIFO chunk instead of blocking; a FIFO manifest, vocabulary or shard is refused"
