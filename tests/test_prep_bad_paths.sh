#!/usr/bin/env bash
# prep with a wrong input path (--video-root, --annotations, --shards missing or of the wrong
# kind) stops naming the flag and the path, before it makes anything: no output folder is left
# behind (it makes --out with its parents, so a typo must not leave a tree of folders).
set -u
cd "$(dirname "$0")/.."
[ -x tools/prep ] || { echo "skip: tools/prep is not built"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
d=$(mktemp -d /tmp/test_prep_bad_paths.XXXXXX)
trap 'rm -rf "$d"' EXIT
mkdir "$d/videos" && echo 'v,0,1,a cat' >"$d/a.csv"
try() { # WANT-TEXT ARGS...: prep fails, says WANT-TEXT, and makes no $d/out
	local want=$1
	shift
	out=$(tools/prep "$@" --out "$d/out/deep/root" 2>&1) && fail "prep $* succeeded"
	grep -q -- "$want" <<<"$out" || fail "prep $*: the message does not say '$want': $out"
	[ -e "$d/out" ] && fail "prep $* left $d/out behind"
	echo "ok: $want"
}
try "--video-root $d/missing" --annotations "$d/a.csv" --video-root "$d/missing"
try "--video-root $d/a.csv is not a folder" --annotations "$d/a.csv" --video-root "$d/a.csv"
try "--annotations $d/none.csv" --annotations "$d/none.csv" --video-root "$d/videos"
try "--annotations $d/videos is a folder" --annotations "$d/videos" --video-root "$d/videos"
try "--shards $d/noshards" --shards "$d/noshards"
echo pass
