#!/usr/bin/env bash
# A library's archive follows its fragment's source list: a source added to the list whose
# object already exists (built before, older than the archive) gets into the archive, and a
# second make with nothing changed archives nothing. The real Makefile in a scratch tree with
# one small library.
set -uo pipefail
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
d=$(mktemp -d /tmp/test_make_archive_list.XXXXXX)
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/fix" "$d/mk"
cp Makefile "$d/" && cp mk/detect.sh "$d/mk/"
printf '#!/bin/sh\nprintf "DEPS_MISSING := \\n" >"$1"\n' >"$d/detect" && chmod +x "$d/detect"
echo 'int fix_a(void) { return 1; }' >"$d/fix/a.c"
echo 'int fix_b(void) { return 2; }' >"$d/fix/b.c"
frag() { printf 'LIBS += fix\nfix_SRCS := %s\n' "$*" >"$d/fix/module.mk"; }
# a make of its own in the scratch tree: not the BUILD (test-san's) or jobserver of the make test running this
mk() {
	(cd "$d" && env -u BUILD -u SAN -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory BUILD=build \
		DETECT="$d/detect" DEPS_DONE=1 "$@") >"$d/out" 2>&1 || { cat "$d/out"; fail "make $*"; }
}
frag fix/a.c
mk build/obj/fix/b.o all # b's object exists, but the library does not list it yet
nm "$d/build/lib/libfix.a" | grep -q fix_b && fail "the archive holds an object its list does not name"
sleep 1.1
frag fix/a.c fix/b.c
mk all
nm "$d/build/lib/libfix.a" | grep -q fix_b || { cat "$d/out"; fail "a source added to the library's list did not get into the archive (its object was older)"; }
mk all
grep -q '^ar ' "$d/out" && { cat "$d/out"; fail "a make with nothing changed archived again"; }
echo "pass: the archive follows its source list, and is left alone when nothing changed"
