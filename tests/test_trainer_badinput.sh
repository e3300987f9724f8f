#!/usr/bin/env bash
# Every bad input makes the trainer print exactly one clear line (naming the problem) and exit 1:
# unknown flag (also in a --config file), missing config file, bad value, missing run dir, a bad
# --backend or one without a GPU, missing ring, geometry or rank-count mismatch,
# missing comm group, an existing checkpoint without --resume, a checkpoint of another model or
# of another rank count.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
expect() { # expect "PATTERN" ARGS...: exit 1 and one stderr line matching PATTERN
	local pat=$1
	shift
	"$TRAINER" "$@" >"$TT_DIR/out" 2>"$TT_DIR/err"
	local rc=$? n
	n=$(wc -l <"$TT_DIR/err")
	[ $rc = 1 ] || fail "trainer $* exited $rc, want 1: $(cat "$TT_DIR/err")"
	[ "$n" = 1 ] || fail "trainer $* printed $n lines, want 1: $(cat "$TT_DIR/err")"
	grep -q -- "$pat" "$TT_DIR/err" || fail "trainer $*: '$(cat "$TT_DIR/err")' does not say '$pat'"
	echo "  ok: $(sed 's/.*fatal: //' "$TT_DIR/err")"
}
ok=("${TT_MODEL[@]}" "${TT_DATA[@]}" --batch-size 4 --steps 2)
expect "unknown flag --bogus" --bogus 3
printf 'batch-size 4\nbogus-key 1\n' >"$TT_DIR/bad.conf"
expect "unknown flag --bogus-key" --config "$TT_DIR/bad.conf" --run-dir "$TT_DIR/r"
expect "config $TT_DIR/none.conf: No such file" --config "$TT_DIR/none.conf"
expect "batch-size" --batch-size 0 --run-dir "$TT_DIR/r"
expect "steps wants an integer, got '1.5'" --steps 1.5 --run-dir "$TT_DIR/r"
expect "loss 'fastclip-v9'" --loss fastclip-v9 --run-dir "$TT_DIR/r"
expect "image-size 30 is not a multiple of --patch 8" --image-size 30 --run-dir "$TT_DIR/r"
expect "run-dir DIR is required" "${ok[@]}"
expect "backend 'tpu' is not one of cpu, cuda" --backend tpu --run-dir "$TT_DIR/r"
expect "precision fp32 with --backend cuda: the CUDA backend's attention computes in bf16 only" \
	--backend cuda --precision fp32 --run-dir "$TT_DIR/r"
# --backend cuda without a GPU (or without the CUDA backend in the build): one line before anything opens
if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	echo "  skip: --backend cuda without a GPU (this machine has one)"
else
	expect "backend cuda: no CUDA device 0 for rank 0" "${ok[@]}" --backend cuda --ring "$TT_TAG-none" --run-dir "$TT_DIR/r"
fi
expect "dataset-size N is required" --model tiny --run-dir "$TT_DIR/r"
expect "comm NAME is required" "${ok[@]}" --ranks 2 --rank 1 --run-dir "$TT_DIR/r"
expect "ring '$TT_TAG-none' does not exist" "${ok[@]}" --ring "$TT_TAG-none" --run-dir "$TT_DIR/r"
[ -e "$TT_DIR/r" ] && fail "a failed start left a run directory behind"
# geometry: a ring of 4 frames for a 2-frame model, and of another text length
"$RINGCTL" create --ring "$TT_TAG-geo" --frames 4 --height 16 --width 16 --text-len 8 --slots 8 >/dev/null 2>&1 || fail ringctl
TT_RINGS+=("$TT_TAG-geo")
expect "carries clips of T=4 H=16 W=16 C=3 text=8 but the model wants T=2 H=16 W=16 C=3 text=8" \
	"${ok[@]}" --ring "$TT_TAG-geo" --run-dir "$TT_DIR/r"
tt_ring "$TT_TAG-ok" 1
# a batch that does not fit the device (here a 1 MiB --memory-limit) stops before anything is
# allocated, naming the batch that fits
expect "batch-size 64 needs .* of device memory .*--memory-limit.*: --batch-size [1-9][0-9]* fits" \
	"${ok[@]}" --batch-size 64 --memory-limit 0.001 --ring "$TT_TAG-ok" --run-dir "$TT_DIR/r"
fits=$(sed -n 's/.*: --batch-size \([0-9]*\) fits.*/\1/p' "$TT_DIR/err")
got=$("$TRAINER" query fit-batch "${ok[@]}" --batch-size 64 --memory-limit 0.001 2>&1)
[ "$got" = "$fits" ] || fail "query fit-batch printed '$got', the refusal named $fits"
expect "serves 1 ranks but this run has --ranks 2" "${ok[@]}" --ring "$TT_TAG-ok" --ranks 2 --comm x --run-dir "$TT_DIR/r"
tt_ring "$TT_TAG-two" 2
expect "comm group '$TT_TAG-nocomm' does not exist" "${ok[@]}" --ring "$TT_TAG-two" --ranks 2 --comm "$TT_TAG-nocomm" \
	--run-dir "$TT_DIR/r"
# a finished run: starting it again without --resume, or resuming it with another model
tt_feeder "$TT_TAG-ok"
"$TRAINER" "${ok[@]}" --ring "$TT_TAG-ok" --run-dir "$TT_DIR/done" 2>/dev/null || fail "a good run failed"
expect "already holds a checkpoint" "${ok[@]}" --ring "$TT_TAG-ok" --run-dir "$TT_DIR/done"
expect "written for model" "${ok[@]}" --vis-width 64 --ring "$TT_TAG-ok" --run-dir "$TT_DIR/done" --resume
"$TRAINER" query comm-create --comm "$TT_TAG-comm" --ranks 2 2>/dev/null || fail "query comm-create failed"
TT_COMMS+=("$TT_TAG-comm")
expect "written by 1 ranks, this run has --ranks 2" "${ok[@]}" --ring "$TT_TAG-two" --ranks 2 --comm "$TT_TAG-comm" \
	--run-dir "$TT_DIR/done" --resume
echo "every bad input: one line, exit 1"
