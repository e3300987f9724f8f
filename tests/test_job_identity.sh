#!/usr/bin/env bash
# Nothing joins the wrong job (issue 31 §2, §4): a ring made with ringctl create --manifest records
# the dataset; a loaderd or trainer given another manifest is refused with both names; a copy of the
# job's manifest (same content) is accepted; the job's manifest rewritten in place while a loader
# runs (a shorter file: SIGBUS for a loader that mapped it) leaves the loader serving the copy it
# validated, with a warning, and a loader started afterwards, which reads the new file, is refused.
set -u
. tests/job_testlib.sh
jt_need tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl
repo=$(pwd)
jt_tmp ident
tmp=$JT_TMP
ring=avclip-ident-$$
lpid=
cleanup() {
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	tools/ringctl destroy --ring "$ring" >/dev/null 2>&1
	jt_cleanup
}
trap cleanup EXIT
jt_data "$tmp"
# another dataset of the same vocabulary: the held-out split
tools/prep --annotations "$tmp/src/heldout.csv" --video-root "$tmp/src/videos" --out "$tmp/other" --short-side 64 \
	--chunk-sec 10 --bpe "$tmp/data/bpe_merges.txt" >/dev/null 2>&1 || fail "prep of the other dataset"
A=$tmp/data/manifest B=$tmp/other/manifest
read -ra geom <<<"$(trainer/trainer query geometry "${JT_MODEL[@]}")"
tools/ringctl create --ring "$ring" --manifest "$A" "${geom[@]}" --slots 16 --seed 7 --replace >/dev/null 2>&1 ||
	fail "ringctl create --manifest"
info=$(tools/ringctl info --ring "$ring" 2>&1)
grep -q "dataset $A (id [0-9a-f]\{16\}" <<<"$info" || fail "ringctl info does not show the dataset: $info"

# a loader with another manifest: refused at once, naming both
out=$(timeout 30 loaderd/loaderd --ring "$ring" --manifest "$B" --workers 1 2>&1)
st=$?
[ $st = 124 ] && fail "a loader with another manifest joined the ring (still running after 30 s)"
[ $st = 0 ] && fail "a loader with another manifest exited 0"
grep -q "serves the dataset of $A .* was given $B" <<<"$out" || fail "the refusal does not name both manifests: $out"

# a trainer with another manifest: refused
out=$(timeout 60 trainer/trainer --ring "$ring" "${JT_MODEL[@]}" --manifest "$B" --run-dir "$tmp/run-b" --steps 2 \
	--dataset-size 1000 --data-timeout 5 2>&1)
st=$?
[ $st = 0 ] && fail "a trainer with another manifest ran"
grep -q "serves the dataset of $A .* this trainer was given $B" <<<"$out" || fail "the trainer's refusal: $(tail -n 3 <<<"$out")"

# a copy of the job's manifest is the same dataset: accepted
cp "$A" "$tmp/data/copy"
loaderd/loaderd --ring "$ring" --manifest "$tmp/data/copy" --workers 1 >"$tmp/l1.log" 2>&1 &
lpid=$!
waitfor 30 grep -q "serving ring" "$tmp/l1.log" || fail "a loader with a copy of the job's manifest: $(tail -n 3 "$tmp/l1.log")"
# a trainer of the job drains the ring, so the loader keeps reading samples and captions
info=$(tools/prep --info "$A")
n=$(sed -n 's/^samples *\([0-9]*\).*/\1/p' <<<"$info") vocab=$(sed -n 's/.*vocabulary \([0-9]*\).*/\1/p' <<<"$info")
trainer/trainer --ring "$ring" "${JT_MODEL[@]}" --manifest "$A" --run-dir "$tmp/run-a" --steps 60 --dataset-size "$n" \
	--vocab "$vocab" --data-timeout 20 >"$tmp/t.log" 2>&1 &
tpid=$!
waitfor 60 grep -q "step 10/" "$tmp/t.log" || fail "the job's trainer did not get to step 10: $(tail -n 3 "$tmp/t.log")"
# rewritten in place while it runs, shorter (same inode): the loader goes on, says so once
[ "$(stat -c %s "$B")" -lt "$(stat -c %s "$A")" ] || fail "fixture: the other manifest is not shorter"
cat "$B" >"$tmp/data/copy"
wait "$tpid" || fail "the trainer failed after the loader's manifest was rewritten: $(tail -n 3 "$tmp/t.log"; tail -n 3 "$tmp/l1.log")"
grep -q "finished 60 steps" "$tmp/t.log" || fail "the trainer did not finish: $(tail -n 3 "$tmp/t.log")"
waitfor 10 grep -q "manifest $tmp/data/copy changed on disk" "$tmp/l1.log" || fail "no warning about the rewritten manifest: $(tail -n 3 "$tmp/l1.log")"
kill -0 "$lpid" 2>/dev/null || { wait "$lpid"; fail "the loader died after its manifest was rewritten (exit $?): $(tail -n 3 "$tmp/l1.log")"; }
grep -q "goes on serving the copy it read and validated" "$tmp/l1.log" || fail "the warning does not say what the loader does"
# ... and a loader started now reads the new content: another dataset, refused
out=$(timeout 30 loaderd/loaderd --ring "$ring" --manifest "$tmp/data/copy" --workers 1 2>&1) && fail "a loader reading the rewritten manifest joined"
grep -q "serves the dataset of $A .* was given $tmp/data/copy" <<<"$out" || fail "the refusal after the rewrite: $out"
kill "$lpid" && wait "$lpid"
st=$?
lpid=
[ $st = 0 ] || fail "the loader did not stop cleanly after the rewrite (exit $st): $(tail -n 3 "$tmp/l1.log")"
echo "ok: the ring records its dataset; another manifest is refused (loader, trainer); a rewritten manifest leaves the running loader on its validated copy and refuses new ones"
