#!/usr/bin/env bash
# The code style (.clang-format) over every C, C++ and CUDA file git tracks, generated tables
# (first line "// GENERATED") left as their generator writes them. Needs clang-format 14, the
# version the tree is formatted with: another version formats some constructs differently.
#   mk/format.sh          rewrite the files in place
#   mk/format.sh --check  list the files that differ, exit 1 if any (tests/test_format.sh)
set -u
cd "$(dirname "$(readlink -f "$0")")/.." # the real tree, also from make test-san's mirror of links
cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
	for c in clang-format-14 clang-format; do
		if command -v "$c" >/dev/null && "$c" --version | grep -q 'version 14\.'; then cf=$c; break; fi
	done
fi
if [ -z "$cf" ]; then
	echo "mk/format.sh: clang-format 14 not found (apt-get install clang-format-14, or CLANG_FORMAT=path)" >&2
	exit 77
fi
files=()
while IFS= read -r f; do
	head -n 1 "$f" | grep -q '^// GENERATED' || files+=("$f")
done < <(git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cpp' '*.hpp')
if [ ${#files[@]} = 0 ]; then
	echo "mk/format.sh: git lists no C/C++/CUDA files in $PWD" >&2
	exit 1
fi
if [ "${1:-}" = --check ]; then
	bad=0
	for f in "${files[@]}"; do
		if ! "$cf" --style=file "$f" | cmp -s - "$f"; then echo "not formatted: $f (mk/format.sh rewrites it)"; bad=1; fi
	done
	[ $bad = 0 ] && echo "ok: ${#files[@]} files formatted as .clang-format says"
	exit $bad
fi
"$cf" --style=file -i "${files[@]}"
echo "formatted ${#files[@]} files"
