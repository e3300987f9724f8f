#!/usr/bin/env bash
# tools/bench/learn_stats.py, bench-learn's report, on fixed rows: each loss's mean over seeds with
# its 95% t interval (10, 20, 30, 90: 37.5, sd 35.9, t(3) 3.182: [-19.7, 94.7]), the paired per-seed
# difference to openclip (1, 2, 3 points: +2.0 [-0.5, +4.5]); seeds only one loss has are not
# paired, one pair gives no interval; cells of batch x ranks apart; the Markdown table; the
# summary line last.
set -u
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
d=$(mktemp -d /tmp/test_bench_learn_stats.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
row() { # loss seed batch ranks t2v_r1 v2t_r1
	echo "{\"loss\":\"$1\",\"seed\":$2,\"batch\":$3,\"ranks\":$4,\"steps\":10,\"samples\":320,\"dataset\":100,\"n\":100,\"captions\":90,\"media\":\"image\",\"t2v_r1\":$5,\"t2v_r5\":0.5,\"v2t_r1\":$6,\"v2t_r5\":0.5,\"chance_r1\":0.01,\"chance_r5\":0.05,\"chance_v2t_r1\":0.0111}"
}
{
	row openclip 1 32 1 0.10 0.20; row openclip 2 32 1 0.20 0.20; row openclip 3 32 1 0.30 0.20; row openclip 9 32 1 0.90 0.90
	row fastclip-v3 1 32 1 0.11 0.20; row fastclip-v3 2 32 1 0.22 0.20; row fastclip-v3 3 32 1 0.33 0.20
	row fastclip-v1 1 32 1 0.15 0.25
	row openclip 1 128 4 0.50 0.50; row openclip 2 128 4 0.50 0.50
	row fastclip-v3 1 128 4 0.40 0.50; row fastclip-v3 2 128 4 0.42 0.50
} >"$d/rows"
python3 tools/bench/learn_stats.py "$d/rows" --markdown "$d/md" >"$d/out" || fail "learn_stats.py exited non-zero"
cat "$d/out"
line() { grep -A5 "^batch $1 on $2 rank" "$d/out" | grep "^$3 "; }
line 32 1 fastclip-v3 | grep -qF '+2.0 [-0.5, +4.5]' || fail "fastclip-v3's t2v R@1 difference is not +2.0 [-0.5, +4.5]"
line 32 1 fastclip-v3 | grep -qF '+0.0 [+0.0, +0.0]' || fail "fastclip-v3's v2t R@1 difference is not 0"
line 32 1 openclip | grep -qF '37.5 [-19.7, 94.7]' || fail "openclip's mean over seeds 1, 2, 3, 9 is not 37.5 [-19.7, 94.7]"
line 32 1 fastclip-v1 | grep -qF '+5.0 (1 seed)' || fail "one paired seed should give no interval"
line 128 4 fastclip-v3 | grep -qF -- '-9.0 [-21.7, +3.7]' || fail "the 128 x 4 cell: fastclip-v3 should be -9.0 [-21.7, +3.7]"
grep -q '100 held-out images (90 distinct captions)' "$d/out" || fail "the held-out size is not reported"
grep -qF '| 32 x 1 | fastclip-v3 | 22.0 [-5.3, 49.3] |' "$d/md" || fail "the Markdown table: $(cat "$d/md")"
tail -n 1 "$d/out" | grep -qF 'bench-learn: fastclip-v3 - openclip, t2v R@1 points [95%]: 32x1 +2.0 [-0.5, +4.5]; 128x4 -9.0 [-21.7, +3.7]' ||
	fail "the summary line is not last or not right: $(tail -n 1 "$d/out")"
echo "means, paired differences and their intervals are right on fixed rows, per cell"
