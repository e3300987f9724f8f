# Sourced by the trainer's script tests: a small model that steps in milliseconds, a ring and a
# synthetic feeder per test (unique names), and a cleanup trap that ends only what it started.
BUILD=${BUILD:-build}
TRAINER=${TRAINER_BIN:-trainer/trainer} # TRAINER_BIN: e.g. a sanitizer build
FEEDER=$BUILD/tests/trainer_feeder
RINGCTL=tools/ringctl
for b in "$TRAINER" "$FEEDER" "$RINGCTL"; do
	[ -x "$b" ] || { echo "skip: $b is not built (run make)"; exit 77; }
done
TT_TAG=tt$$
TT_DIR=$(mktemp -d /tmp/avclip-trainer-test.XXXXXX)
TT_PIDS=()
TT_RINGS=()
TT_COMMS=()
# model: 16x16 clips of 2 frames, text of 8 tokens, one block per tower
TT_MODEL=(--model tiny --image-size 16 --patch 8 --frames 2 --vis-width 32 --vis-layers 1 --vis-heads 2
	--vocab 64 --ctx-len 8 --txt-width 32 --txt-layers 1 --txt-heads 2 --embed-dim 16 --threads 1)
TT_DATA=(--dataset-size 32)
TT_FEED=(--dataset-size 32 --classes 4 --vocab 64)

tt_cleanup() {
	for p in "${TT_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${TT_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	for r in "${TT_RINGS[@]}"; do "$RINGCTL" destroy --ring "$r" >/dev/null 2>&1; done
	for c in "${TT_COMMS[@]}"; do "$TRAINER" query comm-unlink --comm "$c" >/dev/null 2>&1; done
	[ -n "${TT_KEEP:-}" ] && echo "kept $TT_DIR" || rm -rf "$TT_DIR"
}
trap tt_cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }

# tt_ring NAME RANKS [SEED [FIRST_POSITION]]: a ring of the small model's geometry
tt_ring() {
	"$RINGCTL" create --ring "$1" --frames 2 --height 16 --width 16 --text-len 8 --slots 32 --ranks "$2" \
		--seed "${3:-7}" --first-position "${4:-0}" --replace >/dev/null 2>&1 || fail "ringctl create $1"
	TT_RINGS+=("$1")
}

# tt_feeder NAME [flags...]: a background producer; its pid goes to TT_PIDS
tt_feeder() {
	local r=$1
	shift
	"$FEEDER" --ring "$r" "${TT_FEED[@]}" "$@" 2>>"$TT_DIR/feeder.log" &
	TT_PIDS+=($!)
}

# tt_field FILE KEY: the KEY values of a metrics.jsonl, one per line
tt_field() {
	sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1"
}
