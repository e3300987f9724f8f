# Sourced by the tests that run PyTorch or open_clip beside the C code (the interop tests).
# need_python MODULE...: sets $py to the first Python that imports every MODULE: $AVCLIP_PYTHON
# (CI's venv from mk/interop-venv.sh), then python3 and /usr/bin/python3. None: the test skips
# (77), or fails where AVCLIP_REQUIRE_INTEROP=1 says the interop tests must run (.ci/run).
need_python() {
	local p imports
	imports=$(printf 'import %s; ' "$@")
	py=
	for p in ${AVCLIP_PYTHON:-} python3 /usr/bin/python3; do
		if command -v "$p" >/dev/null 2>&1 && "$p" -c "$imports" 2>/dev/null; then py=$p; return 0; fi
	done
	if [ "${AVCLIP_REQUIRE_INTEROP:-0}" = 1 ]; then
		echo "FAIL: no Python with $* (AVCLIP_REQUIRE_INTEROP=1: this test must run; AVCLIP_PYTHON=${AVCLIP_PYTHON:-unset}; mk/interop-venv.sh makes one)"
		exit 1
	fi
	echo "skip: no Python with $* (set AVCLIP_PYTHON, e.g. to the venv mk/interop-venv.sh makes)"
	exit 77
}
