#!/usr/bin/env bash
# A flag two programs share has one type and one meaning everywhere: every program's --help
# (generated from its table by common/flags) is read for "--name TYPE  help", a name with two
# types fails, naming both, and a name whose help differs between programs must match the one
# meaning tests/flags_meaning.txt gives it (a new shared name without a line there fails too).
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
	# "name<TAB>program<TAB>help" with the help's continuation lines joined
	awk -v p="$p" 'function out() { if (name != "") { gsub(/  +/, " ", text); print name "\t" p "\t" text }; name = "" }
		/^  (-[a-zA-Z], )?--[a-z0-9-]+/ { out(); l = $0; sub(/^  (-[a-zA-Z], )?--/, "", l); name = l; sub(/[ =].*/, "", name)
			text = l; sub(/^[^ ]+( [^ ]+)?  +/, "", text); if (text == l) text = ""; next }
		/^      / && name != "" { text = text " " $0; next }
		{ out() } END { out() }' "$tmp/help" >>"$tmp/helps"
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
# one meaning: a name whose help differs between programs matches its line of flags_meaning.txt
meanings=tests/flags_meaning.txt
[ -f "$meanings" ] || fail "$meanings is missing"
awk -F '\t' '$1 != "help" { if (!(($1) in first)) first[$1] = $3; else if (first[$1] != $3) differ[$1] = 1 }
	END { for (n in differ) print n }' "$tmp/helps" | sort >"$tmp/differ"
bad=0
while read -r name; do
	line=$(grep -P "^\Q$name\E\t" "$meanings" | grep -v '^#' | head -n 1)
	if [ -z "$line" ]; then
		echo "FAIL: --$name is described differently by $(awk -F '\t' -v n="$name" '$1 == n { printf "%s ", $2 }' "$tmp/helps")and has no line in $meanings (say its one meaning there)"
		bad=1
		continue
	fi
	want=$(cut -f 2 <<<"$line") not=$(cut -f 3 -s <<<"$line")
	while IFS=$'\t' read -r _ prog text; do
		grep -qEi -- "$want" <<<"$text" || { echo "FAIL: $prog --$name means something else: '$text' (one meaning: /$want/)"; bad=1; }
		[ -z "$not" ] || ! grep -qEi -- "$not" <<<"$text" || { echo "FAIL: $prog --$name: '$text' matches /$not/, which --$name never means"; bad=1; }
	done < <(awk -F '\t' -v n="$name" '$1 == n' "$tmp/helps")
done <"$tmp/differ"
[ $bad = 0 ] || exit 1
shared=$(awk '$1 != "help" { print $1, $3 }' "$tmp/all" | sort -u | awk '{ c[$1]++ } END { for (n in c) if (c[n] > 1) print n }' | sort | tr '\n' ' ')
echo "shared flags with one type and one meaning each: $shared"
