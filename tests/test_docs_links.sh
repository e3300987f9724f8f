#!/usr/bin/env bash
# The README is the entry point and docs/ holds the rest: every docs/*.md is linked from the
# README's "Where to read next", every relative link in the README and in docs/ names a file that
# exists, and the two sections other checks read (First two commands: make test-fresh; Your own
# videos and images: test_readme_own_data) are still in the README.
set -u
cd "$(dirname "$0")/.."
fail=0
for f in docs/*.md; do
	grep -q "](${f})" README.md || { echo "FAIL: README.md does not link $f"; fail=1; }
done
for f in README.md docs/*.md; do
	dir=$(dirname "$f")
	while read -r link; do
		target=${link%%#*}
		[ -n "$target" ] || continue
		case $target in http://* | https://* | mailto:*) continue ;; esac
		[ -e "$dir/$target" ] || { echo "FAIL: $f links $link, which does not exist"; fail=1; }
	done < <(grep -o '](\([^)]*\))' "$f" | sed 's/^](\(.*\))$/\1/')
done
for s in "## First two commands" "## Your own videos and images" "## Where to read next"; do
	grep -qx "$s" README.md || { echo "FAIL: README.md has no '$s' section"; fail=1; }
done
n=$(wc -l <README.md)
[ "$n" -le 260 ] || { echo "FAIL: README.md has $n lines: what is not for a newcomer's first day goes to docs/"; fail=1; }
[ $fail = 0 ] && echo "ok: README and docs/ link each other, $n README lines"
exit $fail
