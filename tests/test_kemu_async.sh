#!/usr/bin/env bash
# The model twin and trainer tests of the CUDA backend again, through the shim's asynchronous
# streams (kernels/cuda/emu/kemu_sched.cpp): every stream a queue run later in a seeded random
# interleaving, and the stream-order checker on. make test runs them under one fixed seed
# (KEMU_SCHED_SEED=1); make test-seeds under KEMU_SCHED_SEED=random (each test prints the seed that
# repeats it). A failing test's log: $BUILD/test-logs/async-NAME.log.
set -u
build=${BUILD:-build}
seed=${KEMU_SCHED_SEED:-1}
all="test_kcuda_backend test_kcuda_dense test_kcuda_embed test_kcuda_loss test_kcuda_optim test_kcuda_step
test_kcuda_model test_kcuda_train test_kcuda_step_fetch test_kcuda_ingest test_trainer_selfcheck test_kemu_graph test_kcuda_graph
test_kcuda_train_graph"
# under a sanitizer (make test-san: the checker is off there, the queued ops' lifetimes are what
# is tested) the quick ones: the model and the self-check take minutes under ASan
[ -n "${RING_SAN:-}" ] && all="test_kcuda_backend test_kcuda_dense test_kcuda_step test_kcuda_train test_kcuda_step_fetch
test_kcuda_ingest"
tests=${KEMU_ASYNC_TESTS:-$all}
mkdir -p "$build/test-logs"
fail=0 ran=0
for t in $tests; do
	bin=$build/tests/$t
	[ -x "$bin" ] || continue
	log=$build/test-logs/async-$t.log
	start=$(date +%s.%N)
	KEMU_SCHED_SEED=$seed timeout -k 10 "${TEST_TIMEOUT:-300}" "$bin" >"$log" 2>&1
	rc=$?
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
	ran=$((ran + 1))
	case $rc in
	0 | 77) printf '%-5s %-28s %6ss\n' "$([ $rc = 0 ] && echo ok || echo skip)" "$t" "$secs" ;;
	*)
		fail=$((fail + 1))
		printf 'FAIL  %-28s %6ss (exit %d, KEMU_SCHED_SEED=%s, log %s)\n' "$t" "$secs" "$rc" "$seed" "$log"
		grep -m 3 "kemu:" "$log" | sed 's/^/      | /'
		tail -n 5 "$log" | sed 's/^/      | /'
		;;
	esac
done
[ $ran -gt 0 ] || { echo "no shim test programs built: skipped"; exit 77; }
echo "asynchronous streams, KEMU_SCHED_SEED=$seed: $ran tests, $fail failed"
[ $fail -eq 0 ]
