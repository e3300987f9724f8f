#!/usr/bin/env bash
# The fast stand-in for make test-fresh: the real Makefile, in a scratch tree whose one fragment
# stops the parse with $(error) when its package is missing (as data/module.mk does),
# with apt-get, dpkg-query, id and the detection replaced by stand-ins on PATH. As root with
# apt-get, a building goal must install the missing package first and then build; without root
# the fragment's own message must be shown, and apt-get not run; a package that stays missing
# after the install must stop the build once (no loop). Also: every package mk/detect.sh can
# name is one make deps installs.
set -uo pipefail
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
d=$(mktemp -d /tmp/test_deps_first.XXXXXX)
trap 'rm -rf "$d"' EXIT

# every package detect.sh names (a try's package list, or missing_pkgs+=(...)) is in DEBIAN_PKGS
pkgs=" $(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory print-debian-pkgs) "
named=$( (grep -oE '^try [A-Z0-9_]+ "[^"]*"' mk/detect.sh | sed -E 's/^try [A-Z0-9_]+ "([^"]*)"/\1/'
	grep -oE 'missing_pkgs\+=\([^)$]*\)' mk/detect.sh | sed -E 's/missing_pkgs\+=\((.*)\)/\1/') | tr ' ' '\n' | sort -u)
[ -n "$named" ] || fail "found no package names in mk/detect.sh"
for p in $named; do
	case $pkgs in *" $p "*) ;; *) fail "mk/detect.sh names $p, but no fragment adds it to DEBIAN_PKGS (make deps would not install it)" ;; esac
done

tree=$d/tree stub=$d/bin state=$d/state
mkdir -p "$tree/fix" "$tree/mk" "$stub" "$state"
cp Makefile "$tree/" && cp mk/detect.sh "$tree/mk/"
cat >"$tree/fix/module.mk" <<'EOF'
DEBIAN_PKGS += libfake-dev
ifeq ($(HAVE_FAKE),0)
$(error libfake-dev is missing: the fixture needs it (run: sudo make deps))
endif
LIBS += fix
fix_SRCS := fix/fix.c
EOF
echo 'int fix_answer(void) { return 42; }' >"$tree/fix/fix.c"
# detection: the fake package is there once the stand-in apt-get has "installed" it
cat >"$stub/detect" <<EOF
#!/bin/sh
echo "configuration (stand-in):"
if grep -qx libfake-dev "$state/installed" 2>/dev/null; then
	echo "  + fake"; printf 'HAVE_FAKE := 1\nDEPS_MISSING := \n' >"\$1"
else
	echo "  x fake (apt: libfake-dev)"; printf 'HAVE_FAKE := 0\nDEPS_MISSING := libfake-dev\n' >"\$1"
fi
echo detect >>"$state/calls"
EOF
cat >"$stub/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >>"$state/calls"
[ "\$1" = update ] && exit 0
for a in "\$@"; do case \$a in -*|install) ;; *) [ -e "$state/broken" ] || echo "\$a" >>"$state/installed" ;; esac; done
EOF
cat >"$stub/dpkg-query" <<EOF
#!/bin/sh
for a in "\$@"; do p=\$a; done
grep -qx "\$p" "$state/installed" 2>/dev/null && echo 'install ok installed'
exit 0
EOF
cat >"$stub/id" <<EOF
#!/bin/sh
cat "$state/uid"
EOF
chmod +x "$stub"/*
# packages the stand-ins should treat as present: everything the real Makefile lists but the fake
for p in build-essential pkg-config; do echo "$p"; done >"$state/installed"
for p in $pkgs; do echo "$p"; done >>"$state/installed"

run() { # run GOAL: make GOAL in the scratch tree with the stand-ins; output in $d/out
	rm -rf "$tree/build" "$state/calls"
	# a make of its own in the scratch tree: not the BUILD or jobserver of the make test running this
	(cd "$tree" && PATH="$stub:$PATH" timeout 120 env -u BUILD -u SAN -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make --no-print-directory BUILD=build DETECT="$stub/detect" "$@") >"$d/out" 2>&1
}

# 1. root, package missing: installed first, then the build runs with the new configuration
echo 0 >"$state/uid"
run all || { cat "$d/out"; fail "make all as root with a missing package stopped (it must install it first)"; }
grep -q 'libfake-dev is missing' "$d/out" && { cat "$d/out"; fail "the fragment's \$(error) fired although the package could be installed"; }
grep -q 'x fake (apt: libfake-dev)' "$d/out" || { cat "$d/out"; fail "the missing package was not reported in the summary"; }
grep -q '^apt-get install.* libfake-dev' "$state/calls" || { cat "$state/calls"; fail "apt-get was not asked for libfake-dev"; }
[ "$(grep -c '^detect' "$state/calls")" -ge 2 ] || fail "the configuration was not detected again after the install"
grep -q 'HAVE_FAKE := 1' "$tree/build/config.mk" || fail "the configuration still says the package is missing"
[ -s "$tree/build/lib/libfix.a" ] || { cat "$d/out"; fail "the library was not built after the install"; }
echo "ok: root with a missing package: reported, installed, detected again, built"

# 2. not root: the fragment's message, no apt-get
grep -vx libfake-dev "$state/installed" >"$state/i" && mv "$state/i" "$state/installed"
echo 1000 >"$state/uid"
run all && fail "make all without root and without the package succeeded"
grep -q 'libfake-dev is missing: the fixture needs it' "$d/out" || { cat "$d/out"; fail "the fragment's message was not shown"; }
grep -q '^apt-get' "$state/calls" 2>/dev/null && fail "apt-get ran without root"
echo "ok: not root: the fragment says what is missing and how to install it"

# 3. root, but the install does not fix detection: one clear stop, not a loop
echo 0 >"$state/uid"
touch "$state/broken"
run test
rc=$?
[ $rc = 0 ] && fail "make test succeeded although the package never appeared"
[ $rc = 124 ] && fail "make test looped (timed out) on a package that stays missing"
grep -q 'libfake-dev is missing: the fixture needs it' "$d/out" || { cat "$d/out"; fail "no message for the package that stayed missing"; }
echo "ok: a package that stays missing after the install stops the build once, with its message"
echo "pass"
