#!/usr/bin/env bash
# mk/mirror.sh (make test-san's mirror of the tree) follows the tree: a file removed or moved since
# the last mirror leaves no dangling link behind (an old header that make or a test would still find),
# in the top folder and in a program folder alike; the mirror's own files (sanitized programs) stay;
# a mirror made for other programs refuses rather than linking into the earlier one's folders.
set -uo pipefail
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
d=$(mktemp -d /tmp/test_mirror_stale.XXXXXX)
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/src/lib" "$d/src/tools"
echo a >"$d/src/lib/old.h" && echo b >"$d/src/lib/new.h" && echo c >"$d/src/tools/x.c" && echo d >"$d/src/top.txt"
bash mk/mirror.sh "$d/src" "$d/m" tools/prog || fail "first mirror"
[ -L "$d/m/lib" ] && [ -L "$d/m/tools/x.c" ] && [ -L "$d/m/top.txt" ] || fail "the mirror lacks its links"
echo prog >"$d/m/tools/prog" # a sanitized program the build put there
mkdir "$d/src/moved" && mv "$d/src/tools/x.c" "$d/src/moved/x.c" && rm "$d/src/top.txt"
bash mk/mirror.sh "$d/src" "$d/m" tools/prog || fail "second mirror"
[ -e "$d/m/tools/x.c" ] || [ -L "$d/m/tools/x.c" ] && fail "a moved file's link stays in the program folder"
[ -L "$d/m/top.txt" ] && fail "a removed file's link stays at the top"
[ -e "$d/m/moved/x.c" ] || fail "the moved file is not in the mirror at its new place"
[ -f "$d/m/tools/prog" ] || fail "the mirror's own program was removed"
# a mirror for other programs (tools/ no longer a program folder) stops, and writes nothing through
# the earlier mirror's program folder into the source tree
out=$(bash mk/mirror.sh "$d/src" "$d/m" lib/prog2 2>&1) && fail "a mirror over another's program folder went on"
grep -q "folder of an earlier mirror" <<<"$out" || fail "no reason given: $out"
[ -e "$d/src/tools/tools" ] && fail "a link was made inside the source tree"
[ -L "$d/m/lib" ] && fail "lib/, now a program folder, is still a link to the source folder"
echo "pass: the mirror drops links to files that are gone and keeps its own programs"
