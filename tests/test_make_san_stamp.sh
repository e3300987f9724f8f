#!/usr/bin/env bash
# A build tree holds one sanitizer's objects: a make with another SAN= than the one that built
# $(BUILD) stops with a clear message instead of linking sanitized and plain objects together
# (how make test-san's test_install once failed in CI: undefined __asan_* at link time).
set -u
fail() { echo "FAIL: $*"; exit 1; }
build=${BUILD:-build}
[ -s "$build/config.mk" ] || { echo "skip: no $build/config.mk (run make first)"; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN make --no-print-directory -n DETECT="cp $build/config.mk" DEPS_DONE=1 "$@" all; }
mk BUILD="$d/plain" >"$d/out" 2>&1 || fail "make -n in a new tree: $(tail -n 3 "$d/out")"
mk BUILD="$d/plain" >"$d/out" 2>&1 || fail "make -n again with the same SAN: $(tail -n 3 "$d/out")"
mk BUILD="$d/plain" SAN=address >"$d/out" 2>&1 && fail "a make with SAN=address ran in a tree built without a sanitizer"
grep -q "built without a sanitizer (SAN=), this make has SAN=address" "$d/out" || fail "unclear refusal: $(tail -n 2 "$d/out")"
mk BUILD="$d/asan" SAN=address >"$d/out" 2>&1 || fail "make -n SAN=address in a new tree: $(tail -n 3 "$d/out")"
mk BUILD="$d/asan" >"$d/out" 2>&1 && fail "a plain make ran in a tree built with SAN=address"
grep -q "built with SAN=address, this make has SAN=:" "$d/out" || fail "unclear refusal: $(tail -n 2 "$d/out")"
echo "ok: a build tree refuses a make with another sanitizer, in both directions"
