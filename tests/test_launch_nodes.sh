#!/usr/bin/env bash
# launch.sh --nodes/--node-rank/--master on one machine, with stand-ins for the trainer and
# loaderd that record what they were given: machine 1 of 2 with 2 ranks hands its trainers the
# global ranks 2 and 3 in torchrun's variables (world 4, the master as given), no shm group, its
# machine's ring of 2 ranks, and its loaders --node 1 --nodes 2; bad node flags are refused. (Two
# real machines need GPU ranks, NCCL: not on a CPU-only machine.)
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl
jt_tmp launch-nodes
tmp=$JT_TMP
run=$tmp/run
jt_data "$tmp"
m=$tmp/data/manifest

# the stand-ins: queries go to the real trainer; a training rank writes its environment
cat >"$tmp/trainer" <<EOS
#!/usr/bin/env bash
case \$1 in --help|query) exec $PWD/trainer/trainer "\$@" ;; esac
env | grep -E '^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|GROUP_RANK|GROUP_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|AVCLIP_JOB)=' \
	| sort >"$tmp/trainer-\$LOCAL_RANK.env"
echo "\$*" >"$tmp/trainer-\$LOCAL_RANK.args"
EOS
cat >"$tmp/loaderd" <<EOS
#!/usr/bin/env bash
echo "\$*" >"$tmp/loaderd.\$\$.args"
exec sleep 60
EOS
chmod +x "$tmp/trainer" "$tmp/loaderd"
export TRAINER=$tmp/trainer LOADERD=$tmp/loaderd

refuse() { # refuse WHAT ARGS...: exit 2 with a line naming the flag
	local out
	out=$(tools/launch.sh 2 --manifest "$m" --run-dir "$tmp/no" "${@:2}" -- "${JT_MODEL[@]}" 2>&1)
	[ $? = 2 ] && grep -q -- "$1" <<<"$out" || fail "$*: want a refusal naming $1, got: $out"
	[ ! -e "$tmp/no" ] || fail "a refused start left $tmp/no"
}
refuse --node-rank --nodes 2 --node-rank 2 --master h:1
refuse --master --nodes 2 --node-rank 1
refuse --master --nodes 2 --node-rank 1 --master nohostport
refuse --nodes --nodes x

timeout 60 tools/launch.sh 2 --manifest "$m" --run-dir "$run" --nodes 2 --node-rank 1 --master node0:29511 \
	-- "${JT_MODEL[@]}" --threads 1 --steps 5 >"$tmp/launch.out" 2>&1
for r in 0 1; do
	[ -s "$tmp/trainer-$r.env" ] || fail "rank $r did not start (launch: $(tail -n 3 "$tmp/launch.out"))"
	want="AVCLIP_JOB=launch:$(jt_ring "$run")
GROUP_RANK=1
GROUP_WORLD_SIZE=2
LOCAL_RANK=$r
LOCAL_WORLD_SIZE=2
MASTER_ADDR=node0
MASTER_PORT=29511
RANK=$((2 + r))
WORLD_SIZE=4"
	[ "$(cat "$tmp/trainer-$r.env")" = "$want" ] || fail "rank $r environment: $(cat "$tmp/trainer-$r.env"), want $want"
	! grep -qE -- '--comm |--rank |--ranks ' "$tmp/trainer-$r.args" || fail "rank $r got rank flags: $(cat "$tmp/trainer-$r.args")"
done
grep -q -- "--node 1 --nodes 2" "$tmp"/loaderd.*.args || fail "the loaders were not given this machine's share: $(cat "$tmp"/loaderd.*.args)"
echo "launch.sh --nodes 2 --node-rank 1: global ranks 2, 3 of 4 in torchrun's variables, loaders --node 1 --nodes 2; bad node flags refused"
