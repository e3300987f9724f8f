#!/usr/bin/env bash
# A misspelt flag is reported as unknown, with the nearest name, before any check of required
# flags, in every program (the flag engine's programs, the trainer's and eval's model-size
# tables, launch.sh); -h is --help everywhere; an old flag name still works with a warning.
set -u
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
progs=(trainer/trainer loaderd/loaderd tools/prep tools/synth tools/ringctl tools/ringstat tools/clipdump tools/eval
	tools/export tools/plot)
for p in "${progs[@]}"; do
	[ -x "$p" ] || { echo "skip: $p is not built"; exit 77; }
done
# says PROGRAM ARGS... -- WANT: the program fails and its last line has WANT
says() {
	local args=() want out
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	want=$2
	out=$("${args[@]}" 2>&1) && fail "${args[*]} succeeded"
	grep -qF -- "$want" <<<"$(tail -n 1 <<<"$out")" || fail "${args[*]}: want '$want', got: $(tail -n 2 <<<"$out")"
}
says tools/eval --manfest x -- "unknown flag --manfest (did you mean --manifest?)"
says tools/eval --manifest x --init-seed 1 --vis-widht 3 -- "unknown flag --vis-widht (did you mean --vis-width?)"
says trainer/trainer --batchsize 3 -- "unknown flag --batchsize (did you mean --batch-size?)"
says trainer/trainer --run-dir x --txt-layer 1 -- "unknown flag --txt-layer (did you mean --txt-layers?)"
says trainer/trainer --lose fastclip-v3 -- "unknown flag --lose (did you mean --loss?)"
says loaderd/loaderd --manfest x -- "unknown flag --manfest (did you mean --manifest?)"
says tools/prep --anotations x -- "unknown flag --anotations (did you mean --annotations?)"
says tools/clipdump --positons 0 -- "unknown flag --positons (did you mean --positions?)"
says tools/launch.sh 1 --manfest x -- "unknown option --manfest (did you mean --manifest?)"
says tools/launch.sh --stp --run-dir x -- "unknown option --stp (did you mean --stop?)"
says tools/launch.sh 1 --batch-size 8 -- "--batch-size is a trainer flag: trainer flags go after --"
# -h is --help
for p in "${progs[@]}" tools/launch.sh; do
	a=$("$p" --help 2>&1) || fail "$p --help exited non-zero"
	b=$("$p" -h 2>&1) || fail "$p -h exited non-zero: $(tail -n 1 <<<"$b")"
	[ "$a" = "$b" ] || fail "$p -h is not --help"
done
# old names: the same setting, a warning that names the new one
out=$(tools/eval --manifest /nonexistent --init-seed 1 --batch-size 4 2>&1)
grep -q "warn: --batch-size is now called --round-size" <<<"$out" || fail "eval --batch-size: no warning: $out"
out=$(tools/prep --annotations /nonexistent.csv --video-root /nonexistent --out /nonexistent/x --manifest /nonexistent/m 2>&1)
grep -q "warn: --manifest is now called --manifest-out" <<<"$out" || fail "prep --manifest: no warning: $out"
echo "unknown flags named with a suggestion before required-flag checks in every program and launch.sh; -h everywhere; old names warn"
