#!/usr/bin/env bash
# --config FILE: 'name value' lines with the flags' names (comments, '=', a bare boolean) set
# the configuration, the command line overrides them, and the effective config line shows both.
# --attention: the log states what runs attention; the CPU backend refuses cudnn with a reason.
set -u
cd "$(dirname "$0")/.."
. tests/trainer_testlib.sh
tt_ring "$TT_TAG-cfg" 1
tt_feeder "$TT_TAG-cfg"
{
	echo "# a trainer configuration"
	echo "ring $TT_TAG-cfg"
	for ((i = 0; i < ${#TT_MODEL[@]}; i += 2)); do echo "${TT_MODEL[$i]#--} ${TT_MODEL[$((i + 1))]}"; done
	echo "dataset-size = 32"
	echo "loss = fastclip-v1   # constant temperature"
	echo "batch-size 4"
	echo "steps 5"
	echo "resume"
} >"$TT_DIR/trainer.conf"
"$TRAINER" --config "$TT_DIR/trainer.conf" --steps 2 --run-dir "$TT_DIR/run" 2>"$TT_DIR/log" ||
	fail "trainer with --config exited $?: $(tail -n 2 "$TT_DIR/log")"
line=$(grep "effective config" "$TT_DIR/log")
for want in "batch-size=4 " "loss=fastclip-v1 " "steps=2 " "resume=1 " "vis-width=32 " "dataset-size=32 "; do
	grep -q -- "$want" <<<"$line" || fail "effective config lacks '$want': $line"
done
[ "$(wc -l <"$TT_DIR/run/metrics.jsonl")" = 2 ] || fail "the command line's --steps 2 did not win"
grep -q "attention (--attention auto): the CPU reference" "$TT_DIR/log" || fail "no attention line in the log: $(grep -i attention "$TT_DIR/log")"
"$TRAINER" --config "$TT_DIR/trainer.conf" --attention sdpa --run-dir "$TT_DIR/run2" 2>"$TT_DIR/log2" &&
	fail "--attention sdpa was accepted"
grep -q "attention 'sdpa' is not one of own, cudnn, auto" "$TT_DIR/log2" || fail "bad --attention message: $(tail -n 1 "$TT_DIR/log2")"
"$TRAINER" --config "$TT_DIR/trainer.conf" --attention cudnn --run-dir "$TT_DIR/run3" 2>"$TT_DIR/log3" &&
	fail "--attention cudnn was accepted by the CPU backend"
grep -q "attention cudnn needs the CUDA backend" "$TT_DIR/log3" || fail "bad --attention cudnn message: $(tail -n 1 "$TT_DIR/log3")"
echo "config file + command line override: batch-size=4 loss=fastclip-v1 steps=2; --attention logged, checked"
