#!/usr/bin/env bash
# The code launch.sh runs while the job runs (the supervisor loop and the functions it calls) has no
# command or process substitution: bash 5.2 runs a signal trap that lands during one inside its
# parser, and the trap fails (the signal lost: "trap: line 2: unexpected EOF while looking for
# matching ')'") or bash aborts ("reader_loop: bad jump"), leaving the job's processes and ring
# behind (seen in test_launch_sigint and test_launch_resume_loaders). $((...)) is arithmetic: allowed.
set -u
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
f=tools/launch.sh
live="say fieldv fnumv out objective_figures reply start_loader save_loaders add_loaders remove_loaders
	stop_loader end_child relay relay_new relay_lines progress last_record ring_occupancy control_dir_ok
	parse_request stop_on_request on_signal stop_job cleanup summary calm"
subst='\$\([^(]|<\('
n=0
for fn in $live; do
	# (a one-line function ends on its own line; summary and calm's helpers run with the traps off)
	body=$(awk -v f="$fn" '$0 ~ "^" f "\\(\\)" { p = 1; print; if (/}[[:space:]]*(#.*)?$/) exit; next } p { print } p && /^}/ { exit }' "$f")
	[ -n "$body" ] || fail "no function $fn in $f (update this list)"
	hits=$(grep -nE "$subst" <<<"$body" | grep -v '^[0-9]*:[[:space:]]*#')
	[ -z "$hits" ] || fail "$fn has a substitution in the running job's code: $hits"
	n=$((n + 1))
done
loop=$(awk '/^# ---- supervise/ { p = 1 } p' "$f")
[ -n "$loop" ] || fail "no supervisor loop section in $f"
hits=$(grep -nE "$subst" <<<"$loop" | grep -v '^[0-9]*:[[:space:]]*#')
[ -z "$hits" ] || fail "the supervisor loop has a substitution: $hits"
# the lint itself: a substitution in a live function is found
grep -qE "$subst" <<<'x=$(date)' || fail "the pattern misses \$(...)"
grep -qE "$subst" <<<'x=$((1 + 2))' && fail "the pattern takes \$((...)) for a substitution"
echo "ok: the supervisor loop and $n functions it runs have no command substitution"
