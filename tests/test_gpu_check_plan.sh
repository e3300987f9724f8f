#!/usr/bin/env bash
# tools/gpu-check.sh fits its 8 minutes and builds only what its stages run (issue 24 §6), read
# from its --dry-run on a machine without a GPU: the stages in order of value, the caps summing to
# at most 480 s; the build goals exactly the programs the stages after it run (each one built,
# nothing else); no stage function names a program of its own (they get their stage's list); and
# `make -n` of the goals, configured without FFmpeg, liburing and libnuma in a scratch build tree,
# links those programs and no other, compiles nothing of loaderd/ or the decoding tools, and
# hands nvcc sm_90 alone.
set -uo pipefail
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
s=tools/gpu-check.sh
plan=$(bash $s --dry-run) || fail "--dry-run failed: $plan"

# the stage lines: "  NAME  CAPs  cpu|gpu  what it checks", each followed by "  runs: PROGRAMS"
stages=$(awk '$2 ~ /^[0-9]+s$/ && ($3 == "cpu" || $3 == "gpu") { print $1 }' <<<"$plan" | tr '\n' ' ')
[ "$stages" = "facts build correctness sanitize bench-kernels trainer torch " ] ||
	fail "the stages are not in the issue's order of value: $stages"
sum=$(awk '$2 ~ /^[0-9]+s$/ && ($3 == "cpu" || $3 == "gpu") { s += $2 + 0 } END { print s }' <<<"$plan")
[ "$sum" -le 480 ] || fail "the caps sum to $sum s, over the 480 s (8 minutes) of the whole check"
# the programs a stage runs: the "runs:" line under its stage line
runs() {
	awk -v n="$1" '$2 ~ /^[0-9]+s$/ { cur = $1; next } $1 == "runs:" && cur == n { for (i = 2; i <= NF; i++) print $i }' <<<"$plan"
}
runs_line() { runs "$1" | tr "\n" " "; }
goals=$(sed -n 's/^build goals: //p' <<<"$plan" | tr ' ' '\n' | sed '/^$/d' | sort -u)
[ -n "$goals" ] || fail "no build goals in the plan: $plan"
used=$(for n in correctness sanitize bench-kernels trainer torch; do runs $n; done | sort -u)
[ "$goals" = "$used" ] || fail "the build goals are not the programs the stages run:
only built: $(comm -23 <(echo "$goals") <(echo "$used") | tr '\n' ' ')
only run: $(comm -13 <(echo "$goals") <(echo "$used") | tr '\n' ' ')"
grep -q -- "-j[0-9]" <<<"$(runs_line build)" || fail "the build stage does not run make in parallel: $(runs build)"
grep -q "CUDA_ARCH='-gencode arch=compute_90,code=sm_90'" <<<"$(runs_line build)" || fail "the build is not for sm_90 alone: $(runs build)"

# a program is named only in the STAGES table ($T/... and $P/...): each stage gets its own list
outside=$(awk '/^STAGES=\(/ { t = 1 } t && /^\)/ { t = 0; next } !t' $s | grep -n '\$[TP]/[A-Za-z_]')
[ -z "$outside" ] || fail "a program named outside the STAGES table (a stage must run only its listed ones): $outside"
for n in $stages; do
	grep -q "^stage_${n//-/_}() {" $s || fail "no function stage_${n//-/_} for the stage $n"
done

# the build's goals exist only where the CUDA toolkit is (a CPU-only machine has no device programs)
if ! grep -q '^HAVE_NVCC := 1' "${BUILD:-build}/config.mk" 2>/dev/null; then
	echo "ok: the plan and its caps (the make -n of the goals needs the CUDA toolkit, which this machine lacks)"
	exit 0
fi
# make -n of the goals, configured without FFmpeg, liburing and libnuma, in a scratch tree
d=$(mktemp -d /tmp/test_gpu_check_plan.XXXXXX)
trap 'rm -rf "$d"' EXIT
scratch_goals=$(sed "s#^build/gpu/#$d/#" <<<"$goals" | tr '\n' ' ')
# shellcheck disable=SC2086
make -n --no-print-directory BUILD="$d" PROG_ROOT="$d/root/" CUDA_ARCH="-gencode arch=compute_90,code=sm_90" \
	WITH_NUMA=0 WITH_URING=0 WITH_LIBAV=0 $scratch_goals >"$d/n.log" 2>&1 || fail "make -n of the goals failed: $(tail -n 5 "$d/n.log")"
grep -q '^HAVE_LIBAV := 0' "$d/config.mk" || fail "the scratch configuration has FFmpeg: $(cat "$d/config.mk")"
if grep -q '^HAVE_NVCC := 1' "$d/config.mk"; then
	grep -q ' -o [^ ]*\.cu\.o ' "$d/n.log" || fail "make -n compiles no CUDA object: $(head -n 5 "$d/n.log")"
	bad=$(grep -o 'arch=compute_[0-9a-z]*,code=[a-z_0-9]*' "$d/n.log" | sort -u | grep -v '^arch=compute_90,code=sm_90$')
	[ -z "$bad" ] || fail "nvcc gets other targets than sm_90: $bad"
fi
linked=$(grep -o -- ' -o [^ ]*\.tmp ' "$d/n.log" | sed 's/^ -o //; s/\.tmp $//' | sort -u)
extra=$(comm -23 <(echo "$linked") <(tr ' ' '\n' <<<"$scratch_goals" | sed '/^$/d' | sort -u))
[ -z "$extra" ] || fail "make links programs no stage runs: $extra"
for p in loaderd/ tools/prep tools/clipdump tools/synth tools/eval; do
	! grep -q -- " -c -o $d/obj/$p" "$d/n.log" || fail "the GPU build compiles $p, which no stage runs"
done
! grep -q -e '-lavformat' -e '-luring' -e '-lnuma' "$d/n.log" || fail "the GPU build links FFmpeg, liburing or libnuma"
echo "ok: $(wc -w <<<"$stages") stages in order, caps $sum s of 480, $(wc -l <<<"$goals") goals = what the stages run; make -n links $(wc -l <<<"$linked") of them${linked:+, no others}, without FFmpeg, liburing, libnuma"
