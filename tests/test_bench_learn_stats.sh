#!/usr/bin/env bash
# tools/bench/learn_stats.py, bench-learn's report: the paired per-seed difference to openclip
# and its 95% t interval on fixed rows (differences 1, 2, 3 points: mean 2, sd 1, t(2) 4.303:
# [-0.5, +4.5]); seeds only one loss has are not paired; one pair gives no interval.
set -u
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
d=$(mktemp -d /tmp/test_bench_learn_stats.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
row() { # loss seed match t2v_r1 v2t_r1
	echo "{\"loss\":\"$1\",\"seed\":$2,\"match\":\"$3\",\"n\":100,\"t2v_r1\":$4,\"t2v_r5\":0.5,\"v2t_r1\":$5,\"v2t_r5\":0.5,\"chance_r1\":0.01,\"chance_r5\":0.05}"
}
for m in caption instance; do
	row openclip 1 $m 0.10 0.20; row openclip 2 $m 0.20 0.20; row openclip 3 $m 0.30 0.20; row openclip 9 $m 0.90 0.90
	row fastclip-v3 1 $m 0.11 0.20; row fastclip-v3 2 $m 0.22 0.20; row fastclip-v3 3 $m 0.33 0.20
	row fastclip-v1 1 $m 0.15 0.25
done >"$d/rows"
python3 tools/bench/learn_stats.py "$d/rows" 10 >"$d/out" || fail "learn_stats.py exited non-zero"
cat "$d/out"
grep -qE '^fastclip-v3 +\+2\.0 \[ +-0\.5, +\+4\.5\] \(3\)' "$d/out" || fail "fastclip-v3's t2v R@1 difference is not +2.0 [-0.5, +4.5] over 3 seeds"
grep -qF '+0.0 [  +0.0,   +0.0] (3)' "$d/out" || fail "fastclip-v3's v2t R@1 difference is not 0 over 3 seeds"
grep -qF '+5.0 (no interval: 1 seed)' "$d/out" || fail "one paired seed should give no interval"
grep -q '100 held-out clips' "$d/out" || fail "the held-out size is not reported"
echo "the paired differences and their intervals are right on fixed rows"
