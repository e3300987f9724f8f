#!/usr/bin/env bash
# `make help` lists every target: each name declared .PHONY in the Makefile or a module
# fragment appears in it as "make NAME", so a new target cannot stay undocumented.
set -u
out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory help 2>&1) || { echo "FAIL: make help: $out"; exit 1; }
targets=$(sed -n 's/^\.PHONY *: *//p' Makefile */module*.mk */*/module*.mk 2>/dev/null | tr ' \t' '\n\n' | sed '/^$/d' | sort -u)
[ -n "$targets" ] || { echo "FAIL: no .PHONY targets found"; exit 1; }
rc=0
for t in $targets; do
	grep -qE -- "(^|[^a-z-])make $t([^a-z-]|\$)" <<<"$out" || { echo "FAIL: make help does not list '$t'"; rc=1; }
done
[ $rc = 0 ] && echo "ok: make help lists all $(wc -w <<<"$targets") targets"
exit $rc
