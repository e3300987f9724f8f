#!/usr/bin/env bash
# Reads ptxas resource reports (OBJECT.ptxas, written by the Makefile's nvcc rule) and fails when
# a kernel spills registers to local memory or was not compiled for every arch its object names.
# usage: mk/ptxas-spills.sh REPORT...    (prints one line per problem; exit 1 if any)
set -u
[ $# -gt 0 ] || { echo "usage: $0 REPORT..." >&2; exit 2; }
demangle() { if command -v c++filt >/dev/null; then c++filt; else cat; fi; }
awk '
function flush_file() {
	if (file == "") return
	for (k in kernels) {
		for (i = 1; i <= narch; i++)
			if (!((k SUBSEP archs[i]) in seen)) {
				printf "%s: kernel %s has no %s code (the object was built for%s)\n", file, k, archs[i], archlist
				bad = 1
			}
	}
	delete kernels; delete seen; narch = 0; archlist = ""
}
FNR == 1 { flush_file(); file = FILENAME; sub(/\.ptxas$/, "", file) }
/^# arch:/ {
	n = split($0, parts, "code=sm_")
	for (i = 2; i <= n; i++) { split(parts[i], w, /[ ,]/); archs[++narch] = "sm_" w[1]; archlist = archlist " sm_" w[1] }
}
/Compiling entry function/ {
	match($0, /'"'"'[^'"'"']*'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2)
	match($0, /sm_[0-9a-z]+/); arch = substr($0, RSTART, RLENGTH)
	kernels[name] = 1; seen[name, arch] = 1
}
/Function properties for/ { fn = $NF }
/bytes spill stores/ {
	if ($5 + 0 > 0 || $9 + 0 > 0) {
		printf "%s: %s (%s) spills: %d bytes spill stores, %d bytes spill loads\n", file, fn, arch, $5, $9
		bad = 1
	}
}
END { flush_file(); exit bad }' "$@" | demangle
exit "${PIPESTATUS[0]}"
