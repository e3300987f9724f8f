#!/usr/bin/env bash
# A flag two programs share has one type everywhere: every program's --help (generated from its
# table by common/flags) is read for "--name TYPE", and a name with two types fails, naming both.
set -u
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
progs=(trainer/trainer loaderd/loaderd tools/prep tools/synth tools/ringctl tools/ringstat tools/clipdump tools/eval
	tools/export tools/plot)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in "${progs[@]}"; do
	[ -x "$p" ] || { echo "skip: $p is not built"; exit 77; }
	"$p" --help >"$tmp/help" 2>&1 || fail "$p --help exited non-zero"
	# "  [-x, ]--name [TYPE]  help": a flag line; "  --a INT --b INT ...": the trainer's model sizes
	sed -nE 's/^  (-[a-zA-Z], )?--([a-z0-9-]+)( [^ ]+)?(  .*)?$/\2 \3/p' "$tmp/help" |
		awk -v p="$p" '{ t = $2 == "" ? "switch" : $2; print $1, t, p }' >>"$tmp/all"
	grep -E '^  (--[a-z0-9-]+ INT ?)+$' "$tmp/help" | grep -oE -- '--[a-z0-9-]+ INT' |
		awk -v p="$p" '{ sub(/^--/, "", $1); print $1, $2, p }' >>"$tmp/all"
done
n=$(awk '$1 != "help"' "$tmp/all" | wc -l)
[ "$n" -gt 150 ] || fail "only $n flag lines read from the programs' --help: the format changed?"
# name -> its types and the programs with each
awk '$1 != "help" { key = $1 " " $2; if (!(key in seen)) { seen[key] = $3; types[$1] = types[$1] " " $2 }
	else seen[key] = seen[key] "," $3; progs[$1] = progs[$1] " " $3 }
	END { for (n in types) { split(substr(types[n], 2), t, " "); if (length(t) > 1) {
		printf "FAIL: --%s has %d types:", n, length(t); for (i in t) printf " %s (%s)", t[i], seen[n " " t[i]]; print "" } } }' \
	"$tmp/all" >"$tmp/conflicts"
if [ -s "$tmp/conflicts" ]; then
	cat "$tmp/conflicts"
	exit 1
fi
shared=$(awk '$1 != "help" { print $1, $3 }' "$tmp/all" | sort -u | awk '{ c[$1]++ } END { for (n in c) if (c[n] > 1) print n }' | sort | tr '\n' ' ')
echo "shared flags with one type each: $shared"
