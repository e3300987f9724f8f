#!/usr/bin/env bash
# ringctl from the shell: create, info, list, refuse to overwrite, replace (with the same default
# seed as launch.sh), bad numbers and a missing ring give one clear line and a non-zero exit,
# destroy removes it.
set -u
ring=t-ringctl-$$
fail() { echo "FAIL: $*"; tools/ringctl destroy --ring "$ring" >/dev/null 2>&1; exit 1; }
tools/ringctl create --ring "$ring" --frames 4 --height 32 --width 48 --slots 6 --ranks 3 --seed 9 || fail "create"
out=$(tools/ringctl info --ring "$ring") || fail "info"
echo "$out"
grep -q "geometry T=4 H=32 W=48 C=3 text=77" <<<"$out" || fail "geometry not shown"
grep -q "slots 6 x" <<<"$out" && grep -q "ranks 3" <<<"$out" && grep -q "seed 9" <<<"$out" || fail "sizes not shown"
err=$(tools/ringctl create --ring "$ring" 2>&1) && fail "create over an existing ring succeeded"
grep -q "already exists" <<<"$err" || fail "no reason given: $err"
tools/ringctl create --ring "$ring" --replace --slots 2 2>/dev/null || fail "replace"
tools/ringctl info --ring "$ring" | grep -q "slots 2 x" || fail "replace did not take"
tools/ringctl info --ring "$ring" | grep -q "seed 1," || fail "the default seed is not launch.sh's (1)"
grep -q -- '--seed X .*(default 1)' tools/launch.sh || fail "launch.sh's --seed default is not 1"
tools/ringctl list | grep -q "^$ring  *T=16 H=224 W=224 C=3 text=77  *2  *1 " || fail "list: $(tools/ringctl list)"
err=$(tools/ringctl create --ring "$ring" --replace --slots many 2>&1) && fail "bad number accepted"
grep -q "slots" <<<"$err" || fail "bad number: $err"
# bounds with their own numbers, and a size refused before anything is allocated
err=$(tools/ringctl create --ring "$ring-b" --text-len 0 2>&1) && fail "--text-len 0 accepted"
grep -q -- "--text-len must be 1..65536, got 0" <<<"$err" || fail "text-len 0: $err"
err=$(tools/ringctl create --ring "$ring-b" --channels 1000 2>&1) && fail "--channels 1000 accepted"
grep -q "channels (C) must be 1..16, got 1000" <<<"$err" || fail "channels 1000: $err"
err=$(tools/ringctl create --ring "$ring-b" --frames 0 2>&1) && fail "--frames 0 accepted"
grep -q "frames (T) must be 1..4096, got 0" <<<"$err" || fail "frames 0: $err"
err=$(tools/ringctl create --ring "$ring-b" --slots 1000000 2>&1) && fail "a 2.4 TB ring accepted"
grep -q "ring needs [0-9.]* GB but /dev/shm has [0-9.]* GB free and the machine [0-9.]* GB of available memory" <<<"$err" ||
	fail "an oversized ring: $err"
[ "$(wc -l <<<"$err")" = 1 ] || fail "more than one line for an oversized ring: $err"
ls -a /dev/shm | grep -q "$ring-b" && fail "a refused ring left a file in /dev/shm"
tools/ringctl destroy --ring "$ring" 2>/dev/null || fail "destroy"
[ -e "/dev/shm/$ring" ] && fail "still there after destroy"
err=$(tools/ringctl info --ring "$ring" 2>&1) && fail "info on a missing ring succeeded"
[ "$(wc -l <<<"$err")" = 1 ] && grep -q "not found" <<<"$err" || fail "missing ring: $err"
echo ok
