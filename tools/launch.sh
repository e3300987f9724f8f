#!/usr/bin/env bash
# tools/launch.sh N: runs a training job on this machine: creates the ring, starts loaderd
# processes (a group per NUMA node) and N trainer ranks, and supervises them until the end.
#
# Supervision: a dead loader is restarted and logged; a dead trainer stops the job with a
# message naming the rank and its last log lines; Ctrl-C / SIGTERM stops everything after
# the trainers write a final checkpoint, and removes the ring and the rank group.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
TRAINER=${TRAINER:-$here/trainer/trainer}
LOADERD=${LOADERD:-$here/loaderd/loaderd}
RINGCTL=${RINGCTL:-$here/tools/ringctl}
RINGSTAT=${RINGSTAT:-$here/tools/ringstat}
PREP=${PREP:-$here/tools/prep}

usage() {
	cat <<EOF
usage: tools/launch.sh N --manifest FILE [options] [-- trainer flags]
       tools/launch.sh --resume RUN_DIR [-- extra trainer flags]
       tools/launch.sh --add-loaders K --run RUN_DIR
       tools/launch.sh --remove-loaders K --run RUN_DIR
       tools/launch.sh --stop --run RUN_DIR

Starts a job of N trainer ranks (GPU i for rank i when GPUs exist, the CPU backend otherwise)
fed by loaderd processes through a shared-memory ring, and supervises it.

  N                       trainer ranks on this machine
  --manifest FILE         training manifest (tools/prep)
  --run-dir DIR           run directory: launch.conf, logs/, metrics.jsonl, ckpt/, ringstat.jsonl
                          (default runs/<date>-<time>)
  --ring NAME             ring name (default: avclip-<run dir name>-<hash of its path>)
  --loaders-per-node K    loaderd processes per NUMA node (default 1)
  --loader-threads T      decode threads per loaderd (default 1)
  --slots S               ring slots (default 4 x N x batch size, at least 16)
  --seed X                data stream seed: which sample and crop each position gets (default 1)
  --resume RUN_DIR        continue a run from its last checkpoint, with its launch.conf
  --add-loaders K         start K more loaderd processes in the running job at --run
  --remove-loaders K      stop K loaderd processes of the running job at --run
  --stop                  stop the job at --run (as Ctrl-C does)
  --run RUN_DIR           the running job for --add-loaders, --remove-loaders, --stop
  --help                  this text
Everything after -- goes to every trainer (see trainer/trainer --help), e.g.
  tools/launch.sh 2 --manifest data/manifest -- --model tiny --loss fastclip-v3 --batch-size 32 --steps 500
EOF
}

# to stderr, and to the run's log once the run directory exists
say() {
	local line
	line="$(date '+%Y-%m-%d %H:%M:%S') launch: $*"
	echo "$line" >&2
	[ -n "${RUN_DIR:-}" ] && [ -d "$RUN_DIR/logs" ] && echo "$line" >>"$RUN_DIR/logs/launch.log"
	return 0
}
die() {
	say "error: $*"
	exit 1
}

# ---- control of a running job from another shell -------------------------------------------
control() { # control RUN_DIR VERB [COUNT]
	local dir=$1 verb=$2 n=${3:-0}
	[ -f "$dir/launch.pid" ] || die "no running job at $dir (no launch.pid)"
	local pid
	pid=$(cat "$dir/launch.pid")
	kill -0 "$pid" 2>/dev/null || die "the job at $dir is not running (launch pid $pid is gone)"
	if [ "$verb" = stop ]; then
		kill -TERM "$pid"
		echo "asked the job at $dir (pid $pid) to stop"
		return 0
	fi
	local req="$dir/control/$(date +%s%N).$$"
	echo "$verb $n" >"$req.tmp" && mv "$req.tmp" "$req"
	for _ in $(seq 100); do
		[ -e "$req" ] || break
		sleep 0.1
	done
	[ -e "$req" ] && die "the job did not take the request within 10 s"
	echo "loaders now: $(ls "$dir"/pids/loaderd-*.pid 2>/dev/null | wc -l)"
}

# ---- argument parsing ---------------------------------------------------------------------------
N="" MANIFEST="" RUN_DIR="" RING="" LOADERS_PER_NODE=1 LOADER_THREADS=1 SLOTS="" SEED=1
RESUME="" CONTROL_VERB="" CONTROL_N="" CONTROL_RUN=""
TRAINER_ARGS=()
while [ $# -gt 0 ]; do
	case $1 in
	--help | -h) usage; exit 0 ;;
	--manifest) MANIFEST=$2; shift ;;
	--run-dir) RUN_DIR=$2; shift ;;
	--ring) RING=$2; shift ;;
	--loaders-per-node) LOADERS_PER_NODE=$2; shift ;;
	--loader-threads) LOADER_THREADS=$2; shift ;;
	--slots) SLOTS=$2; shift ;;
	--seed) SEED=$2; shift ;;
	--resume) RESUME=$2; shift ;;
	--add-loaders) CONTROL_VERB=add CONTROL_N=$2; shift ;;
	--remove-loaders) CONTROL_VERB=remove CONTROL_N=$2; shift ;;
	--stop) CONTROL_VERB=stop ;;
	--run) CONTROL_RUN=$2; shift ;;
	--) shift; TRAINER_ARGS=("$@"); break ;;
	-*) echo "launch: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) [ -z "$N" ] || { echo "launch: unexpected argument $1" >&2; exit 2; }; N=$1 ;;
	esac
	shift || { echo "launch: $1 needs a value" >&2; exit 2; }
done
isnum() { [[ $1 =~ ^[0-9]+$ ]]; }

if [ -n "$CONTROL_VERB" ]; then
	[ -n "$CONTROL_RUN" ] || { echo "launch: --$CONTROL_VERB needs --run RUN_DIR" >&2; exit 2; }
	[ "$CONTROL_VERB" = stop ] || isnum "$CONTROL_N" || { echo "launch: loader count must be a number" >&2; exit 2; }
	control "$CONTROL_RUN" "$CONTROL_VERB" "$CONTROL_N"
	exit $?
fi

for b in "$TRAINER" "$LOADERD" "$RINGCTL" "$RINGSTAT" "$PREP"; do
	[ -x "$b" ] || { echo "launch: $b is not built (run make)" >&2; exit 1; }
done

RESUMING=0
if [ -n "$RESUME" ]; then
	[ -f "$RESUME/launch.conf" ] || { echo "launch: $RESUME has no launch.conf to resume" >&2; exit 1; }
	EXTRA=("${TRAINER_ARGS[@]}")
	# shellcheck source=/dev/null
	. "$RESUME/launch.conf"
	TRAINER_ARGS+=("${EXTRA[@]}")
	RUN_DIR=$RESUME
	RESUMING=1
else
	isnum "$N" && [ "$N" -ge 1 ] || { echo "launch: give the number of trainer ranks N (see --help)" >&2; exit 2; }
	[ -n "$MANIFEST" ] || { echo "launch: --manifest FILE is required" >&2; exit 2; }
	[ -f "$MANIFEST" ] || { echo "launch: manifest $MANIFEST not found" >&2; exit 1; }
	MANIFEST=$(cd "$(dirname "$MANIFEST")" && pwd)/$(basename "$MANIFEST")
	RUN_DIR=${RUN_DIR:-runs/$(date +%Y%m%d-%H%M%S)}
fi
for v in LOADERS_PER_NODE LOADER_THREADS SEED; do isnum "${!v}" || { echo "launch: --${v,,} must be a number" >&2; exit 2; }; done
mkdir -p "$RUN_DIR"/{logs,pids,control} || exit 1
RUN_DIR=$(cd "$RUN_DIR" && pwd)
if [ -f "$RUN_DIR/launch.pid" ] && kill -0 "$(cat "$RUN_DIR/launch.pid")" 2>/dev/null; then
	die "a job is already running in $RUN_DIR (pid $(cat "$RUN_DIR/launch.pid"))"
fi
# default ring name: the run directory's name plus a hash of its full path, so two jobs never
# share a ring even when their run directories have the same name
RING=${RING:-avclip-$(basename "$RUN_DIR" | tr -c 'A-Za-z0-9_.\n-' '_' | cut -c1-28)-$(printf '%s' "$RUN_DIR" | cksum | cut -c1-8)}
COMM=${RING}-comm

# ---- what the model and data need --------------------------------------------------------------
info=$("$PREP" --info "$MANIFEST") || die "cannot read manifest $MANIFEST"
DATASET_SIZE=$(sed -n 's/^samples *\([0-9]*\).*/\1/p' <<<"$info")
VOCAB=$(sed -n 's/.*vocabulary \([0-9]*\).*/\1/p' <<<"$info")
has_flag() { local f; for f in "${TRAINER_ARGS[@]}"; do [ "$f" = "$1" ] && return 0; done; return 1; }
if [ $RESUMING = 0 ]; then
	has_flag --dataset-size || TRAINER_ARGS+=(--dataset-size "$DATASET_SIZE")
	has_flag --vocab || [ -z "$VOCAB" ] || TRAINER_ARGS+=(--vocab "$VOCAB")
fi
geom=$("$TRAINER" --print-geometry "${TRAINER_ARGS[@]}") || die "the trainer flags do not describe a model: ${TRAINER_ARGS[*]}"
read -r FRAMES SIZE CTX <<<"$geom"
BATCH=8
for ((i = 0; i < ${#TRAINER_ARGS[@]}; i++)); do [ "${TRAINER_ARGS[$i]}" = --batch-size ] && BATCH=${TRAINER_ARGS[$((i + 1))]}; done
SLOTS=${SLOTS:-$((4 * N * BATCH < 16 ? 16 : 4 * N * BATCH))}

if [ $RESUMING = 0 ]; then
	{
		echo "# written by tools/launch.sh; --resume reads it"
		printf 'N=%q MANIFEST=%q RING=%q LOADERS_PER_NODE=%q LOADER_THREADS=%q SLOTS=%q SEED=%q\n' \
			"$N" "$MANIFEST" "$RING" "$LOADERS_PER_NODE" "$LOADER_THREADS" "$SLOTS" "$SEED"
		printf 'TRAINER_ARGS=('; printf '%q ' "${TRAINER_ARGS[@]}"; printf ')\n'
	} >"$RUN_DIR/launch.conf"
fi
echo $$ >"$RUN_DIR/launch.pid"

# NUMA nodes with CPUs; one group of loaders per node, pinned when there is more than one
NODES=()
for d in /sys/devices/system/node/node[0-9]*; do
	[ -d "$d" ] && [ -n "$(tr -d '\n' <"$d/cpulist" 2>/dev/null)" ] && NODES+=("${d##*node}")
done
[ ${#NODES[@]} -gt 0 ] || NODES=(0)

# ---- processes ---------------------------------------------------------------------------------
declare -A LOADER_PID=() LOADER_NODE=() LOADER_RESTARTS=() LOADER_FIRST_RESTART=()
TRAINER_PID=()
STATPID=""
STOPPING=0
NEXT_LOADER=0

start_loader() { # start_loader ID NODE
	local id=$1 node=$2 numa=()
	[ ${#NODES[@]} -gt 1 ] && numa=(--numa-node "$node")
	"$LOADERD" --ring "$RING" --manifest "$MANIFEST" --threads "$LOADER_THREADS" "${numa[@]}" \
		>>"$RUN_DIR/logs/loaderd-$id.log" 2>&1 &
	LOADER_PID[$id]=$!
	LOADER_NODE[$id]=$node
	echo "${LOADER_PID[$id]}" >"$RUN_DIR/pids/loaderd-$id.pid"
}

add_loaders() { # add_loaders K: round-robin over the nodes
	local k
	for ((k = 0; k < $1; k++)); do
		local id=$NEXT_LOADER node=${NODES[$((NEXT_LOADER % ${#NODES[@]}))]}
		NEXT_LOADER=$((NEXT_LOADER + 1))
		start_loader "$id" "$node"
		say "loader $id started (pid ${LOADER_PID[$id]}, node $node)"
	done
}

stop_loader() { # stop_loader ID: SIGTERM (it finishes its in-flight slots), then SIGKILL after 10 s
	local id=$1 pid=${LOADER_PID[$1]}
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	unset "LOADER_PID[$id]"
	rm -f "$RUN_DIR/pids/loaderd-$id.pid"
}

remove_loaders() { # remove_loaders K: the newest first, always leaving one
	local ids k
	mapfile -t ids < <(printf '%s\n' "${!LOADER_PID[@]}" | sort -n -r)
	for ((k = 0; k < $1 && k < ${#ids[@]} - 1; k++)); do
		stop_loader "${ids[$k]}"
		say "loader ${ids[$k]} stopped on request"
	done
	[ "$1" -gt $k ] && say "kept the last loader: a job needs at least one"
}

cleanup() {
	local id
	for id in "${!LOADER_PID[@]}"; do stop_loader "$id"; done
	[ -n "$STATPID" ] && kill "$STATPID" 2>/dev/null && wait "$STATPID" 2>/dev/null
	"$RINGCTL" destroy --ring "$RING" >/dev/null 2>&1
	[ "$N" -gt 1 ] && "$TRAINER" --comm-unlink --comm "$COMM" >/dev/null 2>&1
	rm -f "$RUN_DIR/launch.pid"
}

stop_job() { # stop_job REASON: trainers checkpoint on SIGTERM; then everything else goes
	STOPPING=1
	say "stopping ($1): trainers write a final checkpoint"
	local p
	for p in "${TRAINER_PID[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for _ in $(seq 1200); do
		local alive=0
		for p in "${TRAINER_PID[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for p in "${TRAINER_PID[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	cleanup
}
trap 'stop_job "signal"; exit 130' INT
trap 'stop_job "signal"; exit 143' TERM

# ---- start -------------------------------------------------------------------------------------
FIRST=0
if [ $RESUMING = 1 ]; then
	FIRST=$("$TRAINER" --resume-position --run-dir "$RUN_DIR") || die "cannot read the checkpoint in $RUN_DIR"
	TRAINER_ARGS+=(--resume)
fi
say "run $RUN_DIR: $N trainer rank(s), ${#NODES[@]} NUMA node(s) x $LOADERS_PER_NODE loader(s), ring $RING ($SLOTS slots, T=$FRAMES ${SIZE}x$SIZE, text $CTX), seed $SEED, first position $FIRST"
"$RINGCTL" create --ring "$RING" --frames "$FRAMES" --height "$SIZE" --width "$SIZE" --text-len "$CTX" --slots "$SLOTS" \
	--ranks "$N" --seed "$SEED" --first-position "$FIRST" --replace >>"$RUN_DIR/logs/launch.log" 2>&1 ||
	die "cannot create the ring (see $RUN_DIR/logs/launch.log)"
if [ "$N" -gt 1 ]; then
	"$TRAINER" --comm-create --comm "$COMM" --ranks "$N" >>"$RUN_DIR/logs/launch.log" 2>&1 || die "cannot create the rank group"
fi
"$RINGSTAT" --ring "$RING" -n --json 5 >>"$RUN_DIR/ringstat.jsonl" 2>/dev/null &
STATPID=$!
add_loaders $((LOADERS_PER_NODE * ${#NODES[@]}))
NGPU=0
command -v nvidia-smi >/dev/null 2>&1 && NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
for ((r = 0; r < N; r++)); do
	comm=()
	[ "$N" -gt 1 ] && comm=(--comm "$COMM")
	dev=""
	[ "$NGPU" -gt 0 ] && dev=$((r % NGPU))
	CUDA_VISIBLE_DEVICES=$dev "$TRAINER" --ring "$RING" --rank "$r" --ranks "$N" "${comm[@]}" --run-dir "$RUN_DIR" \
		"${TRAINER_ARGS[@]}" >>"$RUN_DIR/logs/trainer-$r.log" 2>&1 &
	TRAINER_PID[$r]=$!
	echo "${TRAINER_PID[$r]}" >"$RUN_DIR/pids/trainer-$r.pid"
done
say "trainers started (pids ${TRAINER_PID[*]}); logs in $RUN_DIR/logs, watch the ring with: tools/ringstat --ring $RING 1"

# one line: where training stands (last metrics record) and how full the ring is
field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" <<<"$2"; }
progress() {
	local m occ
	m=$(tail -n 1 "$RUN_DIR/metrics.jsonl")
	occ=$("$RINGSTAT" --ring "$RING" --json 2>/dev/null | sed -n 's/.*"occupancy_pct":\([^,]*\).*/\1/p')
	say "$(printf 'step %s  loss %.4f  nce %.3f  acc %.2f  tau %.4f  lr %.2e  %.1f samples/s  data wait %.3f s  ring %s%% full' \
		"$(field step "$m")" "$(field loss "$m")" "$(field nce "$m")" "$(field acc "$m")" "$(field tau "$m")" \
		"$(field lr "$m")" "$(field samples_per_s "$m")" "$(field data_wait_s "$m")" "${occ:-?}")"
}

# ---- supervise ---------------------------------------------------------------------------------
DONE=()
last_progress=0
while :; do
	sleep 1 &
	wait $! 2>/dev/null
	for req in "$RUN_DIR"/control/*; do
		[ -f "$req" ] && [[ $req != *.tmp ]] || continue
		read -r verb k <"$req"
		case $verb in
		add) add_loaders "$k" ;;
		remove) remove_loaders "$k" ;;
		*) say "ignored request '$verb $k'" ;;
		esac
		rm -f "$req"
	done
	for id in "${!LOADER_PID[@]}"; do
		pid=${LOADER_PID[$id]}
		kill -0 "$pid" 2>/dev/null && continue
		wait "$pid" 2>/dev/null
		st=$?
		now=$(date +%s)
		if [ $((now - ${LOADER_FIRST_RESTART[$id]:-0})) -gt 60 ]; then LOADER_FIRST_RESTART[$id]=$now LOADER_RESTARTS[$id]=0; fi
		LOADER_RESTARTS[$id]=$((${LOADER_RESTARTS[$id]:-0} + 1))
		if [ "${LOADER_RESTARTS[$id]}" -gt 5 ]; then
			say "loader $id died 5 times within a minute; last lines of $RUN_DIR/logs/loaderd-$id.log:"
			tail -n 10 "$RUN_DIR/logs/loaderd-$id.log" | sed 's/^/    /' >&2
			stop_job "loader $id keeps dying"
			exit 1
		fi
		say "loader $id (pid $pid) died with status $st; restarting it"
		start_loader "$id" "${LOADER_NODE[$id]}"
	done
	for ((r = 0; r < N; r++)); do
		[ -n "${DONE[$r]:-}" ] && continue
		pid=${TRAINER_PID[$r]}
		kill -0 "$pid" 2>/dev/null && continue
		wait "$pid" 2>/dev/null
		st=$?
		if [ $st != 0 ]; then
			say "trainer rank $r (pid $pid) died with status $st; last lines of $RUN_DIR/logs/trainer-$r.log:"
			tail -n 15 "$RUN_DIR/logs/trainer-$r.log" | sed 's/^/    /' >&2
			stop_job "trainer rank $r died"
			exit 1
		fi
		DONE[$r]=1
	done
	if [ ${#DONE[@]} = "$N" ]; then
		say "all $N trainer rank(s) finished"
		cleanup
		exit 0
	fi
	now=$(date +%s)
	if [ $((now - last_progress)) -ge 10 ] && [ -s "$RUN_DIR/metrics.jsonl" ]; then
		last_progress=$now
		progress
	fi
done
