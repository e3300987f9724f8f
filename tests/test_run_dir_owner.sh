#!/usr/bin/env bash
# A run directory (and prep's --out) is written by name (launch.conf, logs, metrics.jsonl, eval.jsonl, checkpoints): one
# that another user owns or that every user may write (where a link planted at metrics.jsonl would
# make the trainer append to the link's target) is refused by launch.sh and by the trainer, naming it.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl
repo=$(pwd)
jt_tmp rundir
tmp=$JT_TMP
ring=avclip-rundir-$$
trap 'tools/ringctl destroy --ring "$ring" >/dev/null 2>&1; jt_cleanup' EXIT
jt_data "$tmp"
mkdir -p "$tmp/open" && chmod 0777 "$tmp/open"
echo secret >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/open/metrics.jsonl"
out=$("$repo/tools/launch.sh" 1 --manifest "$tmp/data/manifest" --run-dir "$tmp/open" -- "${JT_MODEL[@]}" --steps 2 2>&1) &&
	fail "launch.sh ran a job in a world-writable run directory"
grep -q "$tmp/open is writable by every user" <<<"$out" || fail "launch.sh's refusal: $out"
read -ra geom <<<"$(trainer/trainer query geometry "${JT_MODEL[@]}")"
tools/ringctl create --ring "$ring" "${geom[@]}" --slots 16 --replace >/dev/null 2>&1 || fail "ringctl create"
out=$(timeout 60 trainer/trainer --ring "$ring" "${JT_MODEL[@]}" --run-dir "$tmp/open" --steps 2 --dataset-size 26 2>&1) &&
	fail "the trainer ran in a world-writable run directory"
grep -q -- "--run-dir $tmp/open is writable by every user" <<<"$out" || fail "the trainer's refusal: $(tail -n 2 <<<"$out")"
[ "$(cat "$tmp/victim")" = secret ] || fail "the planted link's target was written"
# prep writes chunks, markers and the manifest into --out by name: the same rule
out=$(tools/prep --annotations "$tmp/src/train.csv" --video-root "$tmp/src/videos" --out "$tmp/open" --short-side 64 \
	--chunk-sec 10 --bpe "$tmp/data/bpe_merges.txt" 2>&1) && fail "prep wrote into a world-writable --out"
grep -q -- "--out $tmp/open is writable by every user" <<<"$out" || fail "prep's refusal: $(tail -n 2 <<<"$out")"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -p "$tmp/theirs" && chown nobody "$tmp/theirs"
	out=$(timeout 60 trainer/trainer --ring "$ring" "${JT_MODEL[@]}" --run-dir "$tmp/theirs" --steps 2 --dataset-size 26 2>&1) &&
		fail "the trainer ran in another user's run directory"
	grep -q -- "--run-dir $tmp/theirs belongs to uid $(id -u nobody), not to this user" <<<"$out" || fail "the refusal of another user's folder: $(tail -n 2 <<<"$out")"
	out=$("$repo/tools/launch.sh" 1 --manifest "$tmp/data/manifest" --run-dir "$tmp/theirs" -- "${JT_MODEL[@]}" --steps 2 2>&1) &&
		fail "launch.sh ran a job in another user's run directory"
	grep -q "$tmp/theirs belongs to nobody" <<<"$out" || fail "launch.sh's refusal of another user's folder: $out"
fi
echo "ok: world-writable and foreign run directories are refused by launch.sh and the trainer; the planted link's target is untouched"
