# Sourced by the script tests that run whole jobs as a user does (launch.sh, install, clipdump,
# prep): skip unless the programs are built, a temporary directory removed at exit (KEEP=1
# keeps it), fail/waitfor, and the small synthetic dataset most of them train on.
BUILD=${BUILD:-build}
# jt_need PROG...: exit 77 unless every program is built
jt_need() {
	local b
	for b in "$@"; do
		[ -x "$b" ] || { echo "skip: $b is not built"; exit 77; }
	done
}
# jt_tmp NAME: sets JT_TMP; jt_cleanup (the EXIT trap unless a test sets its own and calls it) removes it
jt_tmp() {
	JT_TMP=$(mktemp -d "/tmp/avclip-$1-test.XXXXXX")
	trap jt_cleanup EXIT
}
jt_cleanup() {
	[ -n "${JT_JOB:-}" ] && kill -TERM "$JT_JOB" 2>/dev/null && wait "$JT_JOB" 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $JT_TMP" || rm -rf "$JT_TMP"
}
# jt_job OUT ARGS...: tools/launch.sh ARGS in the background, its console in OUT; JT_JOB is its pid
# until jt_job_end waits for it (its exit status in JT_JOB_STATUS); jt_cleanup stops one left running
JT_JOB=""
jt_job() {
	local out=$1
	shift
	tools/launch.sh "$@" >"$out" 2>&1 &
	JT_JOB=$!
}
# jt_train OUT TRAINER-ARGS...: jt_job of a 1-rank job of the tiny model on JT_TMP/data into JT_TMP/run,
# for a million steps (until stopped); returns once it has trained a step
jt_train() {
	local out=$1
	shift
	jt_job "$out" 1 --manifest "$JT_TMP/data/manifest" --run-dir "$JT_TMP/run" -- "${JT_MODEL[@]}" --threads 1 \
		--steps 1000000 "$@"
	waitfor 60 test -s "$JT_TMP/run/metrics.jsonl" || fail "no training step within 60 s"
}
jt_job_end() {
	wait "$JT_JOB"
	JT_JOB_STATUS=$? JT_JOB=""
}
# fail MESSAGE: a test may define JT_FAIL_LOGS (files whose tails explain a failure); the message
# comes last, after those tails, so that the last lines of the log (all tests/run.sh shows of a
# failure) name the check that failed
fail() {
	[ -n "${JT_FAIL_LOGS:-}" ] && tail -n 20 $JT_FAIL_LOGS 2>/dev/null
	echo "FAIL: $*"
	exit 1
}
# the job tests look for what a job left behind with pgrep and ps: without them such a check
# would pass by failing to run (procps; make deps installs it)
command -v pgrep >/dev/null && command -v ps >/dev/null || fail "needs pgrep and ps (Debian: procps; make deps installs it)"
# jt_ring RUN_DIR: the ring of the job launch.sh runs (or ran) there; empty before its launch.conf
jt_ring() { sed -n 's/^.*RING=\([^ ]*\).*/\1/p' "$1/launch.conf" 2>/dev/null; }
# waitfor SECONDS COMMAND...: until the command succeeds
waitfor() {
	local t=$1
	shift
	for _ in $(seq $((t * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}
# jt_data DIR: 2 synthetic videos of 30 s (and a held-out one) prepared into DIR/data, with
# DIR/src/{train,heldout}.csv and DIR/src/videos; the tiny model that fits their ring is JT_MODEL
jt_data() {
	tools/synth --out "$1/src" --videos 2 --heldout 1 --minutes 0.5 --size 96x64 --scene-seed 5 >/dev/null 2>&1 || fail "synth"
	tools/prep --annotations "$1/src/train.csv" --video-root "$1/src/videos" --out "$1/data" --short-side 64 \
		--chunk-sec 10 --train-bpe 600 >/dev/null 2>&1 || fail "prep"
}
JT_MODEL=(--model tiny --image-size 16 --patch 8 --frames 2 --vis-width 32 --vis-layers 1 --vis-heads 2
	--txt-width 32 --txt-layers 1 --txt-heads 2 --embed-dim 16 --batch-size 4)
