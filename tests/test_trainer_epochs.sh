#!/usr/bin/env bash
# --epochs E: steps = ceil(E x steps per epoch), an epoch being ceil(dataset-size / (batch x
# ranks)) steps; the epoch in metrics.jsonl counts the same way; query steps reports it;
# --steps with --epochs is refused. The log tells the plan, warns when one step takes more
# samples than the dataset has, and shows the --config file's lines as read.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
out=$("$TRAINER" query steps --epochs 1.5 --dataset-size 32 --batch-size 4 --ranks 2) || fail "query steps: $out"
[ "$out" = "steps 6 steps-per-epoch 4" ] || fail "query steps with 2 ranks: '$out'"
out=$("$TRAINER" query steps --dataset-size 30 --batch-size 4 --steps 9) || fail "query steps"
[ "$out" = "steps 9 steps-per-epoch 8" ] || fail "query steps with --steps: '$out'"
out=$("$TRAINER" query steps --epochs 2 --steps 5 --dataset-size 32 2>&1) && fail "--epochs with --steps accepted"
grep -q "give --steps or --epochs, not both" <<<"$out" || fail "unclear refusal: $out"
out=$("$TRAINER" query steps --epochs 2 2>&1) && fail "--epochs without --dataset-size accepted"
grep -q -- "--epochs needs --dataset-size" <<<"$out" || fail "unclear refusal: $out"

tt_ring "$TT_TAG-ep" 1
tt_feeder "$TT_TAG-ep"
printf '# run settings\nbatch-size 4\nepochs 1.5\n' >"$TT_DIR/ep.conf"
"$TRAINER" "${TT_MODEL[@]}" "${TT_DATA[@]}" --ring "$TT_TAG-ep" --config "$TT_DIR/ep.conf" --run-dir "$TT_DIR/run" \
	2>"$TT_DIR/log" || fail "trainer --epochs 1.5: $(tail -n 3 "$TT_DIR/log")"
[ "$(wc -l <"$TT_DIR/run/metrics.jsonl")" = 12 ] || fail "1.5 epochs of 8 steps should be 12 steps"
[ "$(tt_field "$TT_DIR/run/metrics.jsonl" epoch | tr '\n' ' ')" = "0 0 0 0 0 0 0 0 1 1 1 1 " ] ||
	fail "epochs per step: $(tt_field "$TT_DIR/run/metrics.jsonl" epoch | tr '\n' ' ')"
grep -q "plan: steps 0 to 12, 8 steps per epoch (32 samples, 4 per step): 1.5 epochs" "$TT_DIR/log" || fail "no plan line"
grep -q "config file $TT_DIR/ep.conf:" "$TT_DIR/log" && grep -q "  | epochs 1.5" "$TT_DIR/log" || fail "the config file's lines are not logged"
grep -q "backend cpu with 1 threads (--threads 1)" "$TT_DIR/log" || fail "the thread choice is not explained"
grep -q "more than an epoch" "$TT_DIR/log" && fail "a warning for a batch smaller than the dataset"

"$TRAINER" "${TT_MODEL[@]}" --dataset-size 32 --ring "$TT_TAG-ep" --batch-size 40 --steps 1 --run-dir "$TT_DIR/big" \
	2>"$TT_DIR/big.log" || fail "trainer with a batch above the dataset: $(tail -n 3 "$TT_DIR/big.log")"
grep -q "warn: one step takes 40 samples (--batch-size 40 x 1 ranks), more than an epoch's 32" "$TT_DIR/big.log" ||
	fail "no warning for a step larger than an epoch"
echo "--epochs 1.5 ran 12 steps of 8 per epoch; plan, config lines and the epoch warning logged"
