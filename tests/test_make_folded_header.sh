#!/usr/bin/env bash
# A build tree made before a public header was folded into another (or removed) still builds: its
# dependency files name the old header's link in build/include/, and that link must not get a rule
# that needs the old header (make would stop: "No rule to make target 'fix/old.h'"); the object
# that included it is rebuilt against the new one. The real Makefile in a scratch tree.
set -uo pipefail
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
d=$(mktemp -d /tmp/test_make_folded_header.XXXXXX)
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/fix" "$d/use" "$d/mk"
cp Makefile "$d/" && cp mk/detect.sh "$d/mk/"
printf '#!/bin/sh\nprintf "DEPS_MISSING := \\n" >"$1"\n' >"$d/detect" && chmod +x "$d/detect"
mk() {
	(cd "$d" && env -u BUILD -u SAN -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory BUILD=build \
		DETECT="$d/detect" DEPS_DONE=1 "$@") >"$d/out" 2>&1 || { cat "$d/out"; fail "make $*"; }
}
echo 'int fix_one(void);' >"$d/fix/old.h"
printf '#include "old.h"\nint fix_one(void) { return 1; }\n' >"$d/fix/a.c" # its .d names fix/old.h itself
printf 'PUBLIC_HEADERS += fix/old.h\nUSES_fix :=\nLIBS += fix\nfix_SRCS := fix/a.c\n' >"$d/fix/module.mk"
printf '#include "old.h"\nint use_one(void) { return fix_one(); }\n' >"$d/use/u.c"
printf 'USES_use := fix\nINC_DIRS += use\nLIBS += use\nuse_SRCS := use/u.c\n' >"$d/use/module.mk"
mk all
grep -q 'include/fix/old.h' "$d/build/obj/use/u.d" || fail "the dependency file does not name the header's link"
t0=$(stat -c %Y "$d/build/include/fix/old.h")
sleep 1.1
# the fold: old.h becomes new.h, the includer follows
rm "$d/fix/old.h"
echo 'int fix_one(void); /* folded */' >"$d/fix/new.h"
printf 'PUBLIC_HEADERS += fix/new.h\nUSES_fix :=\nLIBS += fix\nfix_SRCS := fix/a.c\n' >"$d/fix/module.mk"
printf '#include "new.h"\nint use_one(void) { return fix_one(); }\n' >"$d/use/u.c"
printf '#include "new.h"\nint fix_one(void) { return 1; }\n' >"$d/fix/a.c"
mk all
grep -q 'use/u.c' "$d/out" || { cat "$d/out"; fail "the includer was not recompiled"; }
grep -q 'include/fix/new.h' "$d/build/obj/use/u.d" || fail "the rebuilt object does not depend on the new header"
# no rule remade the old header's link (it would point at nothing: a make that stops on it, or
# one that includes a dangling link, is a build that depends on history)
[ "$(stat -c %Y "$d/build/include/fix/old.h")" = "$t0" ] || fail "a rule remade the link of a header PUBLIC_HEADERS no longer names"
echo "pass: a build tree from before a header was folded builds, the includer recompiled against the new one"
