#!/usr/bin/env bash
# tools/launch.sh N: runs a training job on this machine: creates the ring, starts loaderd
# processes (a group per NUMA node) and N trainer ranks, and supervises them until the end.
#
# Supervision: a dead loader is restarted and logged; a dead trainer stops the job with a
# message naming the rank and its last log lines; Ctrl-C / SIGTERM / SIGHUP stops everything
# after the trainers write a final checkpoint, and removes the ring and the rank group.
# Nothing is written before the request is checked: a refused start leaves no run directory.
set -uo pipefail

# the programs: installed side by side as avclip-* (make install), or this source tree's
self=$(readlink -f "$0")
bindir=$(dirname "$self")
if [ -x "$bindir/avclip-trainer" ]; then
	TRAINER=${TRAINER:-$bindir/avclip-trainer} LOADERD=${LOADERD:-$bindir/avclip-loaderd}
	RINGCTL=${RINGCTL:-$bindir/avclip-ringctl} RINGSTAT=${RINGSTAT:-$bindir/avclip-ringstat}
	PREP=${PREP:-$bindir/avclip-prep}
else
	here=$(dirname "$bindir")
	TRAINER=${TRAINER:-$here/trainer/trainer} LOADERD=${LOADERD:-$here/loaderd/loaderd}
	RINGCTL=${RINGCTL:-$here/tools/ringctl} RINGSTAT=${RINGSTAT:-$here/tools/ringstat}
	PREP=${PREP:-$here/tools/prep}
fi
ME=$0 # as the user typed it, for the commands we print
q() { printf '%q' "$1"; } # a word of a printed command: paths with spaces or quotes copy and paste as one

usage() {
	cat <<EOF
usage: $ME N --manifest FILE [options] [-- trainer flags]
       $ME --resume RUN_DIR [--loaders-per-node K] [--loader-threads T] [--slots S] [-- trainer flags]
       $ME --add-loaders K --run-dir RUN_DIR
       $ME --remove-loaders K --run-dir RUN_DIR
       $ME --stop --run-dir RUN_DIR [--wait]

Starts a job of N trainer ranks (GPU i for rank i when GPUs exist, the CPU backend otherwise)
fed by loaderd processes through a shared-memory ring, and supervises it. Ctrl-C stops it
after a final checkpoint; --resume continues it.

  N                       trainer ranks on this machine
  --manifest FILE         training manifest (tools/prep)
  --run-dir DIR           run directory: launch.conf, logs/, metrics.jsonl, ckpt/, ringstat.jsonl
                          (default runs/<date>-<time>); with --add-loaders, --remove-loaders,
                          --stop: the running job's
  --ring NAME             ring name (default: avclip-<run dir name>-<hash of its path>)
  --loaders-per-node K    loaderd processes per NUMA node (default 1)
  --loader-threads T      decode threads per loaderd (its --workers; default 1)
  --slots S               ring slots (default 4 x N x batch size, at least 16)
  --seed X                data stream seed: which sample and crop each position gets (default 1)
  --nodes M               machines of the job (default 1): run launch.sh on each with the same N,
                          flags and --master; each machine has its own ring and loaders, which
                          produce that machine's share of the global stream; GPU ranks only (NCCL)
  --node-rank K           this machine's index, 0 .. M-1 (default 0; Slurm: SLURM_NODEID)
  --master HOST:PORT      where machine 0's rank 0 hands out the NCCL id (default MASTER_ADDR and
                          MASTER_PORT, else Slurm's first host)
  --resume RUN_DIR        continue a run from its last checkpoint, with its launch.conf; trainer
                          flags after -- replace the ones it had (e.g. -- --steps 4000) and are kept
  --add-loaders K         start K more loaderd processes in the running job
  --remove-loaders K      stop K loaderd processes of the running job (the last one stays)
  --stop                  stop the running job (as Ctrl-C does: a final checkpoint first)
  --wait                  with --stop: return when the job has ended, with its summary
  --help                  this text
Everything after -- goes to every trainer (see trainer --help), e.g.
  $ME 2 --manifest data/manifest -- --model tiny --loss fastclip-v3 --batch-size 32 --steps 500
Unless given there, --threads is every core divided among the ranks; the loaders run at nice 10
and use what the trainers leave.
With --eval-manifest M among them, an evaluation ring (RING-eval) and one loaderd --eval filling it
from M are started too: rank 0 evaluates from it (the trainer decodes nothing itself).
EOF
}

# to stderr, and to the run's log once the run directory exists
say() {
	local line
	printf -v line '%(%Y-%m-%d %H:%M:%S)T launch: %s' -1 "$*" # no date process a Ctrl-C could kill
	echo "$line" >&2
	[ -n "${RUN_DIR:-}" ] && [ -d "$RUN_DIR/logs" ] && echo "$line" >>"$RUN_DIR/logs/launch.log"
	return 0
}
# calm CMD...: CMD (a program or a function, run in this shell) with SIGINT and SIGHUP ignored by
# this shell, and so by every program it starts meanwhile: they are forked ignoring them, with no
# moment at their start when the signal still kills (a subshell that ignores them itself has one).
# A terminal's Ctrl-C goes to every process of the job's group, helpers included: a second Ctrl-C
# while the job stops must not kill the rm, sed or ringctl of the stop (a ring, rank group or
# launch.pid left behind, no summary). One that lands meanwhile is dropped (the trainers still
# answer it); the traps are back once CMD returns.
TRAPS_SET=0
calm() {
	trap '' INT HUP
	"$@"
	local rc=$?
	if [ $TRAPS_SET = 1 ]; then
		trap 'on_signal INT 130' INT
		trap 'on_signal HUP 129' HUP
	else
		trap - INT HUP
	fi
	return $rc
}
# a refused request: one line, exit 2 (usage) or 1
usage_error() {
	echo "launch: $*" >&2
	exit 2
}
CREATED_DIR=0 STARTED=0
die() {
	say "error: $*"
	# a start that failed before any trainer ran leaves nothing behind
	if [ $CREATED_DIR = 1 ] && [ $STARTED = 0 ]; then
		rm -rf "$RUN_DIR"
		echo "launch: removed $RUN_DIR (nothing ran)" >&2
	fi
	exit 1
}
isnum() { [[ $1 =~ ^[0-9]+$ ]]; }
# While the job runs, its signal traps are live, and bash 5.2 runs a trap that lands during a command
# substitution inside its parser: the trap fails ("trap: line 2: unexpected EOF while looking for
# matching ')'", the signal lost) or bash aborts ("reader_loop: bad jump"), leaving everything behind.
# So the code of the running job (the supervisor loop and what it calls) has no $(...) or <(...):
# builtins, and `out` for a program's output.
fieldv() { # fieldv VAR KEY JSON-LINE: VAR = the value of KEY, or empty
	local __re="\"$2\":([^,}]*)"
	if [[ $3 =~ $__re ]]; then printf -v "$1" '%s' "${BASH_REMATCH[1]}"; else printf -v "$1" '%s' ""; fi
}
out() { # out VAR CMD...: VAR = CMD's output less its trailing newlines, through a scratch file
	local __v=$1 __rc
	shift
	"$@" >"$SCRATCH"
	__rc=$?
	IFS= read -r -d '' "$__v" <"$SCRATCH"
	while [[ ${!__v} == *$'\n' ]]; do printf -v "$__v" '%s' "${!__v%$'\n'}"; done
	return $__rc
}
last_record() { tail -n 2 "$1" | grep '}$' | tail -n 1; } # last_record FILE: its last complete line
fnumv() { # fnumv VAR FORMAT VALUE: VALUE in FORMAT when it is a number, else as it is (null, ?)
	if [[ $3 =~ ^-?[0-9.]+([eE][-+]?[0-9]+)?$ ]]; then printf -v "$1" "$2" "$3"; else printf -v "$1" '%s' "${3:-?}"; fi
}
# the figures of the run's objective in a metrics record: the reconstruction loss (mae), the loss
# and each head's batch top-1 (classify), or the contrastive loss, its parts and the temperature
objective_figures() { # objective_figures VAR JSON-LINE
	local __m=$2 k t a b c d out sep
	fieldv t recon_loss "$__m"
	if [ -n "$t" ]; then
		fnumv a %.4f "$t"
		out="recon loss $a"
	elif fieldv t top1_head0 "$__m" && [ -n "$t" ]; then
		fieldv a loss "$__m"
		fnumv a %.4f "$a"
		out="loss $a  top-1 " sep=""
		for k in 0 1; do # a second head (the object classes) after a slash
			fieldv t "top1_head$k" "$__m"
			[ -n "$t" ] || continue
			[[ $t =~ ^[0-9.]+$ ]] && printf -v t '%.1f%%' "${t}e2"
			out+="$sep$t" sep=" / "
		done
	else
		fieldv a loss "$__m" && fnumv a %.4f "$a"
		fieldv b nce "$__m" && fnumv b %.3f "$b"
		fieldv c acc "$__m" && fnumv c %.2f "$c"
		fieldv d tau "$__m" && fnumv d %.4f "$d"
		out="loss $a  nce $b  acc $c  tau $d"
	fi
	printf -v "$1" '%s' "$out"
}

# ---- control of a running job from another shell -------------------------------------------
control() { # control RUN_DIR VERB [COUNT]
	local dir=$1 verb=$2 n=${3:-0}
	[ -f "$dir/launch.pid" ] || { echo "launch: no running job at $dir (no launch.pid)" >&2; exit 1; }
	local pid
	pid=$(cat "$dir/launch.pid")
	kill -0 "$pid" 2>/dev/null || { echo "launch: the job at $dir is not running (launch pid $pid is gone)" >&2; exit 1; }
	if [ "$verb" = stop ]; then
		local from
		from=$(stat -c %s "$dir/logs/launch.log" 2>/dev/null || echo 0)
		# the mark says the SIGTERM is this request: a stop asked for is a clean end (exit 0)
		: >"$dir/stop-requested"
		kill -TERM "$pid"
		echo "asked the job at $dir (pid $pid) to stop: the trainers write a final checkpoint"
		[ "$WAIT" = 1 ] || return 0
		while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
		tail -c +$((from + 1)) "$dir/logs/launch.log" 2>/dev/null
		return 0
	fi
	[[ $n =~ ^[0-9]{1,9}$ ]] || usage_error "--$verb-loaders needs a decimal count, not '$n'"
	local req
	req="$dir/control/$(date +%s%N).$$"
	echo "$verb $n" >"$req.tmp" && mv "$req.tmp" "$req"
	# stopping a loader lets it finish its slots first (up to 10 s each)
	for _ in $(seq 600); do
		[ -e "$req.reply" ] && [ ! -e "$req" ] && break
		sleep 0.1
	done
	[ -e "$req.reply" ] || { echo "launch: the job did not answer the request within 60 s" >&2; exit 1; }
	cat "$req.reply"
	rm -f "$req.reply"
}

# ---- argument parsing ---------------------------------------------------------------------------
N="" MANIFEST="" RUN_DIR="" RING="" LOADERS_PER_NODE="" LOADER_THREADS="" SLOTS="" SEED=""
RESUME="" CONTROL_VERB="" CONTROL_N="" WAIT=0 NODES_N=1 NODE_RANK=${SLURM_NODEID:-0} MASTER=""
TRAINER_ARGS=()
need_value() { [ $# -ge 2 ] || usage_error "$1 needs a value (see --help)"; }
LAUNCH_OPTS="--help --manifest --run-dir --ring --loaders-per-node --loader-threads --slots --seed --nodes --node-rank
	--master --resume --add-loaders --remove-loaders --stop --wait"
nearest_opt() { # nearest_opt FLAG: the option of LAUNCH_OPTS at most two edits away, or nothing
	awk -v w="$1" -v opts="$LAUNCH_OPTS" '
	function lev(a, b, la, lb, i, j, c, prev, cur) {
		la = length(a); lb = length(b)
		for (j = 0; j <= lb; j++) prev[j] = j
		for (i = 1; i <= la; i++) {
			cur[0] = i
			for (j = 1; j <= lb; j++) {
				c = prev[j - 1] + (substr(a, i, 1) != substr(b, j, 1))
				if (prev[j] + 1 < c) c = prev[j] + 1
				if (cur[j - 1] + 1 < c) c = cur[j - 1] + 1
				cur[j] = c
			}
			for (j = 0; j <= lb; j++) prev[j] = cur[j]
		}
		return prev[lb]
	}
	BEGIN { n = split(opts, o, /[ \t\n]+/); bd = 3
		for (k = 1; k <= n; k++) if (o[k] != "" && (x = lev(w, o[k])) < bd) { bd = x; best = o[k] }
		print best }'
}
while [ $# -gt 0 ]; do
	case $1 in
	--help | -h) usage; exit 0 ;;
	--manifest) need_value "$@"; MANIFEST=$2; shift ;;
	--run-dir) need_value "$@"; RUN_DIR=$2; shift ;;
	--ring) need_value "$@"; RING=$2; shift ;;
	--loaders-per-node) need_value "$@"; LOADERS_PER_NODE=$2; shift ;;
	--loader-threads) need_value "$@"; LOADER_THREADS=$2; shift ;;
	--slots) need_value "$@"; SLOTS=$2; shift ;;
	--seed) need_value "$@"; SEED=$2; shift ;;
	--nodes) need_value "$@"; NODES_N=$2; shift ;;
	--node-rank) need_value "$@"; NODE_RANK=$2; shift ;;
	--master) need_value "$@"; MASTER=$2; shift ;;
	--resume) need_value "$@"; RESUME=$2; shift ;;
	--add-loaders) need_value "$@"; CONTROL_VERB=add CONTROL_N=$2; shift ;;
	--remove-loaders) need_value "$@"; CONTROL_VERB=remove CONTROL_N=$2; shift ;;
	--stop) CONTROL_VERB=stop ;;
	--wait) WAIT=1 ;;
	--run) usage_error "--run is spelled --run-dir (see --help)" ;;
	--) shift; TRAINER_ARGS=("$@"); break ;;
	-*)
		flag=${1%%=*}
		# (the help read whole: grep -q closing the pipe early fails it under pipefail)
		if [ -x "$TRAINER" ] && grep -qE -- "(^| )$flag( |=|\$)" <<<"$("$TRAINER" --help 2>/dev/null)"; then
			usage_error "$flag is a trainer flag: trainer flags go after --, e.g. $ME 1 --manifest M -- $flag ..."
		fi
		near=$(nearest_opt "$flag")
		[ -z "$near" ] || usage_error "unknown option $flag (did you mean $near?)"
		usage_error "unknown option $1 (see --help; trainer flags go after --)"
		;;
	*) [ -z "$N" ] || usage_error "unexpected argument $1 (see --help)"; N=$1 ;;
	esac
	shift
done
for v in "--loaders-per-node:$LOADERS_PER_NODE" "--loader-threads:$LOADER_THREADS" "--slots:$SLOTS" "--seed:$SEED" \
	"--nodes:$NODES_N" "--node-rank:$NODE_RANK"; do
	[ -z "${v#*:}" ] || isnum "${v#*:}" || usage_error "${v%%:*} must be a whole number, got '${v#*:}'"
done
[ "$NODES_N" -ge 1 ] || usage_error "--nodes must be at least 1"
[ "$NODE_RANK" -lt "$NODES_N" ] || usage_error "--node-rank $NODE_RANK must be below --nodes $NODES_N"
if [ "$NODES_N" -gt 1 ]; then
	if [ -n "$MASTER" ]; then
		[[ $MASTER == *:* ]] && isnum "${MASTER##*:}" || usage_error "--master wants HOST:PORT, got '$MASTER'"
		MASTER_ADDR=${MASTER%:*} MASTER_PORT=${MASTER##*:}
	fi
	if [ -z "${MASTER_ADDR:-}" ] && [ -n "${SLURM_JOB_NODELIST:-}" ]; then # Slurm's first host, as srun's tasks see it
		MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null | head -n 1)
		MASTER_PORT=${MASTER_PORT:-$((20000 + ${SLURM_JOB_ID:-0} % 10000))}
	fi
	[ -n "${MASTER_ADDR:-}" ] ||
		usage_error "--nodes $NODES_N needs --master HOST:PORT (machine 0's address), MASTER_ADDR or a Slurm job"
fi

if [ -n "$CONTROL_VERB" ]; then
	opt=--stop
	[ "$CONTROL_VERB" = stop ] || opt=--$CONTROL_VERB-loaders
	[ -n "$RUN_DIR" ] || usage_error "$opt needs --run-dir RUN_DIR (the running job's)"
	[ "$CONTROL_VERB" = stop ] || isnum "$CONTROL_N" || usage_error "$opt needs a whole number, got '$CONTROL_N'"
	[ $WAIT = 0 ] || [ "$CONTROL_VERB" = stop ] || usage_error "--wait goes with --stop"
	control "$RUN_DIR" "$CONTROL_VERB" "$CONTROL_N"
	exit $?
fi
[ $WAIT = 0 ] || usage_error "--wait goes with --stop"

for b in "$TRAINER" "$LOADERD" "$RINGCTL" "$RINGSTAT" "$PREP"; do
	[ -x "$b" ] || { echo "launch: $b is not built (run make)" >&2; exit 1; }
done

# ---- trainer flags: values of, removing, path flags made absolute --------------------------------
BOOL_FLAGS=" --resume --resume-on-new-data --help "
flag_value() { # flag_value NAME [DEFAULT]: the last value TRAINER_ARGS gives --NAME
	local i v=${2:-} a
	for ((i = 0; i < ${#TRAINER_ARGS[@]}; i++)); do
		a=${TRAINER_ARGS[$i]}
		if [ "$a" = "--$1" ]; then v=${TRAINER_ARGS[$((i + 1))]:-}; elif [[ $a == --$1=* ]]; then v=${a#*=}; fi
	done
	printf '%s' "$v"
}
# has_flag NAME [ARRAY]: TRAINER_ARGS (or the array named) gives --NAME
has_flag() { local -n _args=${2:-TRAINER_ARGS}; local a; for a in "${_args[@]}"; do [ "$a" = "--$1" ] || [[ $a == --$1=* ]] && return 0; done; return 1; }
drop_flag() { # drop_flag NAME: removes --NAME VALUE and --NAME=VALUE from TRAINER_ARGS
	local out=() i a
	for ((i = 0; i < ${#TRAINER_ARGS[@]}; i++)); do
		a=${TRAINER_ARGS[$i]}
		if [ "$a" = "--$1" ]; then
			[[ $BOOL_FLAGS == *" --$1 "* ]] || i=$((i + 1))
			continue
		fi
		[[ $a == --$1=* ]] || out+=("$a")
	done
	TRAINER_ARGS=("${out[@]}")
}
absolute() { # absolute PATH: without symlinks resolved; it need not exist
	realpath -m -s -- "$1"
}
absolute_paths() { # the trainer flags that name files, so a resume from anywhere finds them
	local f v
	for f in eval-manifest config; do
		has_flag "$f" || continue
		v=$(flag_value "$f")
		drop_flag "$f"
		TRAINER_ARGS+=("--$f" "$(absolute "$v")")
	done
}
ckpt_step() { # ckpt_step DIR: the step of DIR/ckpt/LATEST, empty when there is none
	local l
	l=$(cat "$1/ckpt/LATEST" 2>/dev/null) || return 0
	[[ $l =~ ^ckpt-([0-9]+)\. ]] && echo $((10#${BASH_REMATCH[1]}))
}

# ---- what to run: a new run, or the run being resumed -------------------------------------------
RESUMING=0
if [ -n "$RESUME" ]; then
	[ -f "$RESUME/launch.conf" ] || { echo "launch: $RESUME has no launch.conf to resume (was it started by launch.sh?)" >&2; exit 1; }
	for v in "N:$N" "--manifest:$MANIFEST" "--ring:$RING" "--seed:$SEED" "--run-dir:$RUN_DIR"; do
		[ -z "${v#*:}" ] || usage_error "--resume keeps the run's ${v%%:*}; start a new run to change it"
	done
	EXTRA=("${TRAINER_ARGS[@]}") CLI_LPN=$LOADERS_PER_NODE CLI_LT=$LOADER_THREADS CLI_SLOTS=$SLOTS
	# shellcheck source=/dev/null
	. "$RESUME/launch.conf" || { echo "launch: $RESUME/launch.conf is not readable" >&2; exit 1; }
	LOADERS_PER_NODE=${CLI_LPN:-$LOADERS_PER_NODE} LOADER_THREADS=${CLI_LT:-$LOADER_THREADS} SLOTS=${CLI_SLOTS:-$SLOTS}
	# later flags replace earlier ones: launch.conf keeps one of each
	for ((i = 0; i < ${#EXTRA[@]}; i++)); do
		[[ ${EXTRA[$i]} == --* ]] && { f=${EXTRA[$i]#--}; drop_flag "${f%%=*}"; }
	done
	TRAINER_ARGS+=("${EXTRA[@]}")
	RUN_DIR=$(absolute "$RESUME")
	RESUMING=1
else
	isnum "$N" && [ "$N" -ge 1 ] || usage_error "give the number of trainer ranks N, e.g. $ME 1 --manifest FILE (see --help)"
	[ -n "$MANIFEST" ] || usage_error "--manifest FILE is required"
	[ -f "$MANIFEST" ] || { echo "launch: manifest $MANIFEST not found" >&2; exit 1; }
	if [ "$(head -c 8 "$MANIFEST")" != AVCLIPMF ]; then
		echo "launch: $MANIFEST is not a manifest; if it lists videos and captions, make one with" >&2
		echo "        tools/prep --annotations $(q "$MANIFEST") --video-root VIDEO_DIR --out DATA_DIR, then pass --manifest DATA_DIR/manifest" >&2
		exit 1
	fi
	MANIFEST=$(absolute "$MANIFEST")
	RUN_DIR=$(absolute "${RUN_DIR:-runs/$(date +%Y%m%d-%H%M%S)}")
	done_step=$(ckpt_step "$RUN_DIR")
	if [ -n "$done_step" ]; then
		echo "launch: $RUN_DIR already holds a run with a checkpoint at step $done_step; continue it with" >&2
		echo "        $(q "$ME") --resume $(q "$RUN_DIR")   (add -- --steps M to go further), or choose a new --run-dir" >&2
		exit 1
	fi
	SEED=${SEED:-1} LOADERS_PER_NODE=${LOADERS_PER_NODE:-1} LOADER_THREADS=${LOADER_THREADS:-1}
	absolute_paths
fi
if [ -f "$RUN_DIR/launch.pid" ] && kill -0 "$(cat "$RUN_DIR/launch.pid")" 2>/dev/null; then
	echo "launch: a job is already running in $RUN_DIR (pid $(cat "$RUN_DIR/launch.pid")); stop it with $(q "$ME") --stop --run-dir $(q "$RUN_DIR")" >&2
	exit 1
fi
# default ring name: the run directory's name plus a hash of its full path, so two jobs never
# share a ring even when their run directories have the same name
RING=${RING:-avclip-$(basename "$RUN_DIR" | tr -c 'A-Za-z0-9_.\n-' '_' | cut -c1-28)-$(printf '%s' "$RUN_DIR" | cksum | cut -d' ' -f1 | cut -c1-8)}
COMM=${RING}-comm

# ---- what the model and data need (all checked before anything is written) ------------------
info=$("$PREP" --info "$MANIFEST" 2>&1) || { echo "launch: cannot read manifest $MANIFEST: $info" >&2; exit 1; }
DATASET_SIZE=$(sed -n 's/^samples *\([0-9]*\).*/\1/p' <<<"$info")
VOCAB=$(sed -n 's/.*vocabulary \([0-9]*\).*/\1/p' <<<"$info")
if [ $RESUMING = 0 ]; then
	has_flag dataset-size || TRAINER_ARGS+=(--dataset-size "$DATASET_SIZE")
	has_flag vocab || [ -z "$VOCAB" ] || TRAINER_ARGS+=(--vocab "$VOCAB")
elif has_flag resume-on-new-data; then
	# the run goes on over other data: its size and vocabulary are the manifest's now (launch.conf
	# holds the old ones), unless this command line gives them
	has_flag dataset-size EXTRA || { drop_flag dataset-size; TRAINER_ARGS+=(--dataset-size "$DATASET_SIZE"); }
	has_flag vocab EXTRA || [ -z "$VOCAB" ] || { drop_flag vocab; TRAINER_ARGS+=(--vocab "$VOCAB"); }
fi
geom=$("$TRAINER" query geometry "${TRAINER_ARGS[@]}" 2>&1) || usage_error "the trainer flags are not valid: ${geom##*fatal: }"
plan=$("$TRAINER" query steps --ranks $((N * NODES_N)) "${TRAINER_ARGS[@]}" 2>&1) || usage_error "the trainer flags are not valid: ${plan##*fatal: }"
read -r -a GEOM <<<"$geom"
EVAL_MANIFEST=$(flag_value eval-manifest "")
read -r _ FRAMES _ SIZE _ _ _ CTX <<<"$geom"
read -r _ TOTAL _ PER_EPOCH <<<"$plan"
BATCH=$(flag_value batch-size 8)
SLOTS=${SLOTS:-$((4 * N * BATCH < 16 ? 16 : 4 * N * BATCH))}
FIRST=0
if [ $RESUMING = 1 ]; then
	done_step=$(ckpt_step "$RUN_DIR")
	if [ -z "$done_step" ]; then
		echo "launch: WARNING: $RUN_DIR has no checkpoint: --resume starts this run again from step 0" >&2
	elif [ "$done_step" -ge "$TOTAL" ]; then
		echo "launch: the run in $RUN_DIR is finished: its checkpoint is at step $done_step of $TOTAL." >&2
		echo "        To train longer: $(q "$ME") --resume $(q "$RUN_DIR") -- --steps $((TOTAL * 2))" >&2
		exit 0
	else
		FIRST=$("$TRAINER" query resume-position --run-dir "$RUN_DIR") || { echo "launch: cannot read the checkpoint in $RUN_DIR" >&2; exit 1; }
	fi
fi

# what the trainers would refuse at start (the vocabularies of --manifest, --eval-manifest and
# --init-from; --init-from's weights, loaded on the CPU; a resume's batch size), before anything is
# written or started; what --init-from loads and a resume's LR rule are worth seeing now
CHECK_ARGS=(query check-start --ranks $((N * NODES_N)) --run-dir "$RUN_DIR" --manifest "$MANIFEST")
[ $((N * NODES_N)) -gt 1 ] && CHECK_ARGS+=(--comm "$COMM") # CPU ranks need one; the check only names it
[ $RESUMING = 1 ] && CHECK_ARGS+=(--resume)
check=$("$TRAINER" "${CHECK_ARGS[@]}" "${TRAINER_ARGS[@]}" 2>&1) ||
	{ echo "launch: the trainers would refuse to start: ${check##*fatal: }" >&2; exit 1; }
grep -E 'weights from|--init-from|plan:' <<<"$check" | sed -E 's/^[0-9-]+ [0-9:]+ trainer[^ ]* (info: |warn: )?/launch: /' >&2

# NUMA nodes with CPUs; one group of loaders per node, pinned when there is more than one
NODES=()
for d in /sys/devices/system/node/node[0-9]*; do
	[ -d "$d" ] && [ -n "$(tr -d '\n' <"$d/cpulist" 2>/dev/null)" ] && NODES+=("${d##*node}")
done
[ ${#NODES[@]} -gt 0 ] || NODES=(0)
# the trainers' kernel threads: every core, shared by the ranks. The loaders run at nice 10, so
# they take the cycles the trainers leave (a full ring idles them) instead of cores set aside for
# them, and rarely preempt a trainer thread (an OpenMP team waits for its slowest thread: threads
# that compete with busy loaders at the same priority run several times slower).
CORES=$(nproc)
LOADER_NICE=10
# OpenMP's default wait spins at each barrier, so while one thread of a team is preempted (by a
# loader or any other process) the others burn their cores waiting for it; passive waiters sleep.
# Measured here with other work running (load average ~9): 100 demo steps took 162 s with 2
# spinning threads, 44 s with 1 thread, 32 s with 2 passive threads.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# loaders: --loaders-per-node on each NUMA node; a resume without it starts as many as the run
# last had, loaders added or removed live included (RUN_DIR/loaders keeps the count)
START_LOADERS=$((LOADERS_PER_NODE * ${#NODES[@]})) LOADERS_NOTE=""
if [ $RESUMING = 1 ] && [ -z "$CLI_LPN" ] && isnum "$(cat "$RUN_DIR/loaders" 2>/dev/null)" &&
	[ "$(cat "$RUN_DIR/loaders")" -ge 1 ]; then
	START_LOADERS=$(cat "$RUN_DIR/loaders") LOADERS_NOTE=" (as the run last had them; --loaders-per-node K sets them)"
fi
THREAD_ARGS=()
if has_flag threads; then
	THREADS_NOTE="--threads $(flag_value threads) as given"
else
	T=$((CORES / N))
	[ $T -ge 1 ] || T=1
	THREAD_ARGS=(--threads "$T")
	THREADS_NOTE="$T per rank: $CORES cores over $N rank(s), the loaders at nice $LOADER_NICE on what the trainers leave (choose with -- --threads K)"
fi

# ---- the run directory: written only now --------------------------------------------------------
[ -d "$RUN_DIR" ] || CREATED_DIR=1
mkdir -p "$RUN_DIR"/{logs,pids} || exit 1
# launch.conf, logs and pid files are written there by name: no other user may plant links in it
for d in "$RUN_DIR" "$RUN_DIR/logs" "$RUN_DIR/pids"; do
	[ -O "$d" ] || die "$d belongs to $(stat -c %U "$d" 2>/dev/null), not to $(id -un): its owner could replace the job's files; use a run directory of your own"
	[ $(($(stat -c %#a "$d") & 2)) = 0 ] || die "$d is writable by every user: another user could plant links at the job's file names; chmod o-w it, or use a run directory of your own"
done
# control/ takes requests from other shells: only the job's user may write there (a request is
# input, parsed strictly; a directory someone else owns or can write is refused, never used)
mkdir -p -m 700 "$RUN_DIR/control" 2>/dev/null
if [ -L "$RUN_DIR/control" ] || [ ! -d "$RUN_DIR/control" ] || [ ! -O "$RUN_DIR/control" ]; then
	die "$RUN_DIR/control is not a directory of $(id -un) (owner $(stat -c %U "$RUN_DIR/control" 2>/dev/null || echo none)): refusing to take control requests from it"
fi
chmod 700 "$RUN_DIR/control" || die "cannot make $RUN_DIR/control mode 0700"
{
	echo "# written by tools/launch.sh; --resume reads it"
	printf 'N=%q MANIFEST=%q RING=%q LOADERS_PER_NODE=%q LOADER_THREADS=%q SLOTS=%q SEED=%q\n' \
		"$N" "$MANIFEST" "$RING" "$LOADERS_PER_NODE" "$LOADER_THREADS" "$SLOTS" "$SEED"
	printf 'NODES_N=%q NODE_RANK=%q MASTER_ADDR=%q MASTER_PORT=%q\n' "$NODES_N" "$NODE_RANK" "${MASTER_ADDR:-}" \
		"${MASTER_PORT:-}"
	# --resume-on-new-data is for this resume only: a later change of the data is refused again
	printf 'TRAINER_ARGS=('; for a in "${TRAINER_ARGS[@]}"; do [ "$a" = --resume-on-new-data ] || printf '%q ' "$a"; done
	printf ')\n'
} >"$RUN_DIR/launch.conf.tmp" && mv "$RUN_DIR/launch.conf.tmp" "$RUN_DIR/launch.conf" || die "cannot write $RUN_DIR/launch.conf"
echo $$ >"$RUN_DIR/launch.pid"
SCRATCH=$RUN_DIR/pids/launch.scratch # out's (see fieldv)
rm -f "$RUN_DIR/stop-requested" # a mark a stopped run left: this run's SIGTERMs are not requests yet

# ---- processes ---------------------------------------------------------------------------------
declare -A LOADER_PID=() LOADER_NODE=() LOADER_RESTARTS=() LOADER_FIRST_RESTART=()
TRAINER_PID=()
STATPID=""
EVAL_PID="" EVAL_RESTARTS=0
NEXT_LOADER=0
REPLY_TEXT=""

reply() { # a line for the console and for the shell that sent a control request
	say "$*"
	REPLY_TEXT+="$*"$'\n'
}

start_loader() { # start_loader ID NODE
	local id=$1 node=$2 numa=()
	[ ${#NODES[@]} -gt 1 ] && numa=(--numa-node "$node")
	[ "$NODES_N" -gt 1 ] && numa+=(--node "$NODE_RANK" --nodes "$NODES_N") # this machine's share of the stream
	nice -n "$LOADER_NICE" "$LOADERD" --ring "$RING" --manifest "$MANIFEST" --workers "$LOADER_THREADS" "${numa[@]}" \
		>>"$RUN_DIR/logs/loaderd-$id.log" 2>&1 &
	LOADER_PID[$id]=$!
	LOADER_NODE[$id]=$node
	echo "${LOADER_PID[$id]}" >"$RUN_DIR/pids/loaderd-$id.pid"
}

start_eval_loader() { # the evaluation ring's one loader: held-out samples in order, centre crops
	nice -n "$LOADER_NICE" "$LOADERD" --ring "$RING-eval" --manifest "$EVAL_MANIFEST" --eval --workers "$LOADER_THREADS" \
		>>"$RUN_DIR/logs/loaderd-eval.log" 2>&1 &
	EVAL_PID=$!
	echo "$EVAL_PID" >"$RUN_DIR/pids/loaderd-eval.pid"
}

save_loaders() { # the loader count a --resume starts with, live changes included
	echo "${#LOADER_PID[@]}" >"$RUN_DIR/loaders.tmp" && mv "$RUN_DIR/loaders.tmp" "$RUN_DIR/loaders"
}

add_loaders() { # add_loaders K: round-robin over the nodes
	local k
	for ((k = 0; k < $1; k++)); do
		local id=$NEXT_LOADER node=${NODES[$((NEXT_LOADER % ${#NODES[@]}))]}
		NEXT_LOADER=$((NEXT_LOADER + 1))
		start_loader "$id" "$node"
		reply "loader $id started (pid ${LOADER_PID[$id]}, node $node)"
	done
}

end_child() { # end_child PID TENTHS: SIGTERM, SIGKILL if it is alive TENTHS tenths of a second later; reaped
	local i
	kill -TERM "$1" 2>/dev/null
	for ((i = 0; i < $2; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

stop_loader() { # stop_loader ID: SIGTERM (it finishes its in-flight slots), then SIGKILL after 10 s
	local id=$1
	end_child "${LOADER_PID[$id]}" 100
	unset "LOADER_PID[$id]"
	calm rm -f "$RUN_DIR/pids/loaderd-$id.pid"
}

remove_loaders() { # remove_loaders K: the newest first, always leaving one
	local ids k
	printf '%s\n' "${!LOADER_PID[@]}" | sort -n -r >"$SCRATCH"
	mapfile -t ids <"$SCRATCH"
	for ((k = 0; k < $1 && k < ${#ids[@]} - 1; k++)); do
		stop_loader "${ids[$k]}"
		reply "loader ${ids[$k]} stopped on request"
	done
	[ "$1" -gt $k ] && reply "kept the last loader: a job needs at least one ($k of $1 stopped)"
	return 0
}

# the lines of rank 0's log a user wants on the console: plan, backend, evaluations,
# checkpoints, warnings and errors (the per-step lines stay in the log); a resumed run's log
# goes on from the lines of the runs before
RELAYED=$(cat "$RUN_DIR/logs/trainer-0.log" 2>/dev/null | wc -l)
relay_lines() { # relay_lines FILE FIRST LAST: fails unless every part of the pipe finished
	sed -n "$2,$3p" "$1" |
		grep -E ' (warn|error|fatal):|: (plan|note):|backend |checkpoint at step|eval at step|resumed from|stopped by a signal|abandoned|finished [0-9]+ steps' |
		sed -E 's/^[0-9-]+ [0-9:]+ trainer\.r0\[[0-9]+\] (info: )?/rank 0: /' |
		while IFS= read -r l; do [ -n "$l" ] && say "$l"; done
	local st=("${PIPESTATUS[@]}")
	[ "${st[0]}" = 0 ] && [ "${st[1]}" -le 1 ] && [ "${st[2]}" = 0 ]
}
# (while the job stops, calm: the last lines, the final checkpoint's among them, must come out; while
# it runs, a Ctrl-C that kills the pipe only means the lines are relayed on the next round)
relay() {
	if [ -n "$STOP_SIG" ]; then calm relay_new; else relay_new; fi
	return 0
}
relay_new() {
	local f=$RUN_DIR/logs/trainer-0.log n
	[ -f "$f" ] || return 0
	out n wc -l <"$f"
	isnum "$n" && [ "$n" -gt "$RELAYED" ] || return 0
	relay_lines "$f" $((RELAYED + 1)) "$n" && RELAYED=$n # lines are done once all were said
	return 0
}

# the end of a run in a few lines: the last step's figures, where it stands, the last checkpoint, the
# command that continues (calm: none of its programs may be killed half-way by a later Ctrl-C)
summary() { calm summary_lines; }
summary_lines() {
	local step last=""
	step=$(ckpt_step "$RUN_DIR")
	last=$(last_record "$RUN_DIR/metrics.jsonl" 2>/dev/null)
	local ls figs
	fieldv ls step "$last"
	isnum "$ls" && objective_figures figs "$last" && say "last metrics, step $ls: $figs"
	last=""
	[ -s "$RUN_DIR/eval.jsonl" ] && last=$(tail -n 1 "$RUN_DIR/eval.jsonl")
	if [ -n "$last" ]; then
		local es t v c
		fieldv es step "$last" && fieldv t t2v_r1 "$last" && fieldv v v2t_r1 "$last" && fieldv c chance_r1 "$last"
		say "$(awk -v s="$es" -v t="$t" -v v="$v" -v c="$c" \
			'BEGIN { printf "held-out at step %s: R@1 text->video %.1f%%, video->text %.1f%% (chance %.1f%%)", s, 100 * t, 100 * v, 100 * c }')"
	fi
	if [ -z "$step" ]; then
		say "no checkpoint was written; $(q "$ME") --resume $(q "$RUN_DIR") would start from step 0"
	elif [ "$step" -ge "$TOTAL" ]; then
		say "finished at step $step of $TOTAL; checkpoint $RUN_DIR/ckpt/$(cat "$RUN_DIR/ckpt/LATEST")"
		say "to train longer: $(q "$ME") --resume $(q "$RUN_DIR") -- --steps $((TOTAL * 2))"
	else
		say "stopped at step $step of $TOTAL; checkpoint $RUN_DIR/ckpt/$(cat "$RUN_DIR/ckpt/LATEST")"
		say "to continue: $(q "$ME") --resume $(q "$RUN_DIR")"
	fi
}

cleanup() { # (its programs run calm: a Ctrl-C during the stop must not leave a ring or rank group)
	local id
	for id in "${!LOADER_PID[@]}"; do stop_loader "$id"; done
	[ -n "$STATPID" ] && end_child "$STATPID" 20 # bounded: never wait on a helper that does not go
	if [ -n "$EVAL_PID" ]; then
		end_child "$EVAL_PID" 100
		calm rm -f "$RUN_DIR/pids/loaderd-eval.pid"
		calm "$RINGCTL" destroy --ring "$RING-eval" >/dev/null 2>&1
	fi
	calm "$RINGCTL" destroy --ring "$RING" >/dev/null 2>&1
	[ "$N" -gt 1 ] && calm "$TRAINER" query comm-unlink --comm "$COMM" >/dev/null 2>&1
	calm rm -f "$RUN_DIR/launch.pid" "$SCRATCH"
}

stop_job() { # stop_job REASON: trainers checkpoint on their stop signal; then everything else goes
	say "stopping ($1): the trainers write a final checkpoint"
	local p waited=0
	for p in "${TRAINER_PID[@]}"; do kill -TERM "$p" 2>/dev/null; done
	while :; do
		local alive=0
		for p in "${TRAINER_PID[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.1 # (a later Ctrl-C ends the nap early and is answered)
		waited=$((waited + 1))
		[ $((waited % 300)) = 0 ] && say "still waiting for the trainers' final checkpoint ($((waited / 10)) s)"
		if [ $waited -ge 3000 ]; then
			say "the trainers did not stop within 300 s: killing them (the last checkpoint stays)"
			break
		fi
	done
	for p in "${TRAINER_PID[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	relay
	cleanup
}
# a signal only records the request: the supervisor loop stops the job outside the trap, so a
# second Ctrl-C during the stop runs this again and is answered
STOP_SIG="" STOP_STATUS=0
on_signal() { # on_signal NAME STATUS
	if [ -n "$STOP_SIG" ]; then
		say "already stopping after SIG$STOP_SIG: the trainers' final checkpoint comes first (SIGKILL abandons it)"
		return 0
	fi
	STOP_SIG=$1 STOP_STATUS=$2
	return 0
}
stop_on_request() { # the stop a signal asked for, from the supervisor loop
	# launch.sh --stop marks its SIGTERM: a stop asked for ends the job cleanly (exit 0); another
	# SIGTERM (kill, systemd, a scheduler) keeps 128 + 15
	if [ "$STOP_SIG" = TERM ] && [ -e "$RUN_DIR/stop-requested" ]; then
		stop_job "launch.sh --stop"
		STOP_STATUS=0
	else
		stop_job "SIG$STOP_SIG"
	fi
	calm rm -f "$RUN_DIR/stop-requested"
	summary
	exit "$STOP_STATUS"
}
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP
TRAPS_SET=1

# ---- start -------------------------------------------------------------------------------------
[ $RESUMING = 1 ] && TRAINER_ARGS+=(--resume)
say "run $RUN_DIR: $N trainer rank(s), $START_LOADERS loader(s) over ${#NODES[@]} NUMA node(s)$LOADERS_NOTE, ring $RING ($SLOTS slots, T=$FRAMES ${SIZE}x$SIZE, text $CTX), seed $SEED, first position $FIRST"
say "steps: $TOTAL$([ "${PER_EPOCH:-0}" -gt 0 ] && printf ' (%s per epoch of %s samples)' "$PER_EPOCH" "$DATASET_SIZE"); threads: $THREADS_NOTE"
# the ring records the job's dataset: a loader or trainer given another manifest is refused
"$RINGCTL" create --ring "$RING" --manifest "$MANIFEST" "${GEOM[@]}" --slots "$SLOTS" \
	--ranks "$N" --seed "$SEED" --first-position "$FIRST" --replace >>"$RUN_DIR/logs/launch.log" 2>&1 ||
	die "cannot create the ring: $(tail -n 1 "$RUN_DIR/logs/launch.log")"
if [ "$N" -gt 1 ] && [ "$NODES_N" = 1 ]; then
	"$TRAINER" query comm-create --comm "$COMM" --ranks "$N" >>"$RUN_DIR/logs/launch.log" 2>&1 || die "cannot create the rank group"
fi
if [ -n "$EVAL_MANIFEST" ]; then
	"$RINGCTL" create --ring "$RING-eval" --manifest "$EVAL_MANIFEST" "${GEOM[@]}" --slots $((2 * BATCH < 16 ? 16 : 2 * BATCH)) --ranks 1 \
		--seed "$SEED" --replace >>"$RUN_DIR/logs/launch.log" 2>&1 ||
		die "cannot create the evaluation ring: $(tail -n 1 "$RUN_DIR/logs/launch.log")"
	start_eval_loader
	say "evaluation ring $RING-eval filled from $EVAL_MANIFEST by loaderd --eval (pid $EVAL_PID)"
fi
"$RINGSTAT" --ring "$RING" -n --json 5 >>"$RUN_DIR/ringstat.jsonl" 2>/dev/null &
STATPID=$!
add_loaders "$START_LOADERS"
save_loaders
REPLY_TEXT=""
NGPU=0
command -v nvidia-smi >/dev/null 2>&1 && NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
GPU_ARGS=()
[ "$NGPU" -gt 0 ] && ! has_flag backend && GPU_ARGS=(--backend cuda --device 0) # one visible GPU per rank
for ((r = 0; r < N; r++)); do
	comm=()
	[ "$N" -gt 1 ] && [ "$NODES_N" = 1 ] && comm=(--comm "$COMM")
	dev=""
	[ "$NGPU" -gt 0 ] && dev=$((r % NGPU))
	# the launcher's environment names the rank (torchrun's variables): the same for 1 or M machines
	RANK=$((NODE_RANK * N + r)) WORLD_SIZE=$((NODES_N * N)) LOCAL_RANK=$r LOCAL_WORLD_SIZE=$N \
		GROUP_RANK=$NODE_RANK GROUP_WORLD_SIZE=$NODES_N MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} \
		MASTER_PORT=${MASTER_PORT:-29500} AVCLIP_JOB=${AVCLIP_JOB:-launch:$RING} CUDA_VISIBLE_DEVICES=$dev \
		"$TRAINER" --ring "$RING" "${comm[@]}" --run-dir "$RUN_DIR" --manifest "$MANIFEST" \
		"${GPU_ARGS[@]}" "${THREAD_ARGS[@]}" "${TRAINER_ARGS[@]}" >>"$RUN_DIR/logs/trainer-$r.log" 2>&1 &
	TRAINER_PID[$r]=$!
	echo "${TRAINER_PID[$r]}" >"$RUN_DIR/pids/trainer-$r.pid"
done
STARTED=1
say "trainers started (pids ${TRAINER_PID[*]}; $([ "$NGPU" -gt 0 ] && echo "$NGPU GPU(s) found" || echo "no GPU found")); logs in $RUN_DIR/logs"
say "watch the ring: $(q "$RINGSTAT") --run-dir $(q "$RUN_DIR") 1; stop: Ctrl-C or $(q "$ME") --stop --run-dir $(q "$RUN_DIR")"

# one line: where training stands (last metrics record), when it ends and how full the ring is
T_SEEN="" STEP_SEEN=""
progress() {
	local m occ step eta="" now ep figs lr sps dw
	out m last_record "$RUN_DIR/metrics.jsonl" # a complete line, not one being written
	fieldv step step "$m"
	isnum "$step" || return 0
	printf -v now '%(%s)T' -1
	if [ -z "$T_SEEN" ]; then
		T_SEEN=$now STEP_SEEN=$step
	elif [ "$step" -gt "$STEP_SEEN" ]; then
		local left=$(((TOTAL - step) * (now - T_SEEN) / (step - STEP_SEEN)))
		printf -v eta '  ETA %d:%02d:%02d' $((left / 3600)) $((left / 60 % 60)) $((left % 60))
	fi
	out occ ring_occupancy
	fieldv ep epoch "$m"
	objective_figures figs "$m"
	fieldv lr lr "$m" && fnumv lr %.2e "$lr"
	fieldv sps samples_per_s "$m" && fnumv sps %.1f "$sps"
	fieldv dw data_wait_s "$m" && fnumv dw %.3f "$dw"
	say "step $step/$TOTAL (epoch $ep)  $figs  lr $lr | $sps samples/s  data wait $dw s  ring ${occ:-?}% full$eta"
}
ring_occupancy() { "$RINGSTAT" --ring "$RING" --json 2>/dev/null | sed -n 's/.*"occupancy_pct":\([^,]*\).*/\1/p'; }

# ---- control requests: data, never code -------------------------------------------------------
# A request is one line "add K" or "remove K", K a decimal count in 1..MAX_REQ_LOADERS; anything
# else is refused with a line in the log (it is never evaluated: a count reaches arithmetic only
# after it matched). The directory is re-checked before each read: mode 0700, the job's user.
MAX_REQ_LOADERS=256
CONTROL_DIR_WARNED=""
control_dir_ok() {
	local d=$RUN_DIR/control why=""
	if [ -L "$d" ] || [ ! -d "$d" ]; then why="it is not a directory"
	elif [ ! -O "$d" ]; then
		local owner me
		out owner stat -c %U "$d"
		out me id -un
		why="it is owned by $owner, not $me"
	else
		local mode
		out mode stat -c %a "$d"
		[ "$mode" = 700 ] || why="its mode is $mode, not 700"
	fi
	[ -z "$why" ] && { CONTROL_DIR_WARNED=""; return 0; }
	[ -n "$CONTROL_DIR_WARNED" ] || say "warning: ignoring control requests in $d: $why"
	CONTROL_DIR_WARNED=1
	return 1
}
parse_request() { # parse_request FILE: sets REQ_VERB REQ_N, or REQ_WHY and fails
	local line="" extra=""
	REQ_VERB="" REQ_N="" REQ_WHY=""
	local size
	out size stat -c %s "$1" 2>/dev/null
	isnum "$size" || size=0
	[ "$size" -le 64 ] || { REQ_WHY="longer than 64 bytes"; return 1; }
	{ IFS= read -r line; IFS= read -r extra; } <"$1" 2>/dev/null
	[ -z "$extra" ] || { REQ_WHY="more than one line"; return 1; }
	if [[ $line =~ ^(add|remove)\ ([0-9]{1,9})$ ]]; then
		REQ_VERB=${BASH_REMATCH[1]} REQ_N=$((10#${BASH_REMATCH[2]}))
		[ "$REQ_N" -ge 1 ] && [ "$REQ_N" -le $MAX_REQ_LOADERS ] && return 0
		REQ_WHY="count $REQ_N is not in 1..$MAX_REQ_LOADERS"
		return 1
	fi
	printf -v REQ_WHY "not 'add K' or 'remove K' with a decimal count: %q" "$line"
	return 1
}

# ---- supervise ---------------------------------------------------------------------------------
DONE=()
last_progress=0 STOP_MARK_SEEN=0
while :; do
	# a foreground nap: the terminal's Ctrl-C ends it at once, a SIGTERM within a second (bash's
	# `wait` on a background nap was seen to hang in bash 5.2 under load, waiting for any child)
	[ -n "$STOP_SIG" ] || sleep 1
	# launch.sh --stop's mark without its SIGTERM a round later: the signal was lost (bash 5.2 drops
	# a trap that lands while it parses a command substitution: "trap: unexpected EOF")
	if [ -z "$STOP_SIG" ] && [ -e "$RUN_DIR/stop-requested" ]; then
		[ $STOP_MARK_SEEN = 1 ] && STOP_SIG=TERM STOP_STATUS=143
		STOP_MARK_SEEN=1
	fi
	[ -n "$STOP_SIG" ] && stop_on_request
	control_dir_ok && for req in "$RUN_DIR"/control/*; do
		[ -f "$req" ] && [ ! -L "$req" ] && [[ $req != *.tmp ]] && [[ $req != *.reply ]] || continue
		REPLY_TEXT=""
		if parse_request "$req"; then
			case $REQ_VERB in
			add) add_loaders "$REQ_N" && save_loaders ;;
			remove) remove_loaders "$REQ_N" && save_loaders ;;
			esac
		else
			reply "refused control request ${req##*/}: $REQ_WHY"
		fi
		REPLY_TEXT+="loaders now: ${#LOADER_PID[@]}"$'\n'
		printf '%s' "$REPLY_TEXT" >"$req.reply.tmp" && mv "$req.reply.tmp" "$req.reply"
		rm -f "$req"
	done
	for id in "${!LOADER_PID[@]}"; do
		pid=${LOADER_PID[$id]}
		kill -0 "$pid" 2>/dev/null && continue
		wait "$pid" 2>/dev/null
		st=$?
		printf -v now '%(%s)T' -1
		if [ $((now - ${LOADER_FIRST_RESTART[$id]:-0})) -gt 60 ]; then LOADER_FIRST_RESTART[$id]=$now LOADER_RESTARTS[$id]=0; fi
		LOADER_RESTARTS[$id]=$((${LOADER_RESTARTS[$id]:-0} + 1))
		if [ "${LOADER_RESTARTS[$id]}" -gt 5 ]; then
			say "loader $id died 5 times within a minute; last lines of $RUN_DIR/logs/loaderd-$id.log:"
			tail -n 10 "$RUN_DIR/logs/loaderd-$id.log" | sed 's/^/    /' >&2
			stop_job "loader $id keeps dying"
			summary
			exit 1
		fi
		say "loader $id (pid $pid) died with status $st; restarting it"
		start_loader "$id" "${LOADER_NODE[$id]}"
	done
	if [ -n "$EVAL_PID" ] && ! kill -0 "$EVAL_PID" 2>/dev/null; then
		wait "$EVAL_PID" 2>/dev/null
		EVAL_RESTARTS=$((EVAL_RESTARTS + 1))
		if [ $EVAL_RESTARTS -gt 5 ]; then
			say "the evaluation loader died 5 times; last lines of $RUN_DIR/logs/loaderd-eval.log:"
			tail -n 10 "$RUN_DIR/logs/loaderd-eval.log" | sed 's/^/    /' >&2
			stop_job "the evaluation loader keeps dying"
			summary
			exit 1
		fi
		say "the evaluation loader (pid $EVAL_PID) died; restarting it"
		start_eval_loader
	fi
	relay
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
			summary
			exit 1
		fi
		DONE[$r]=1
	done
	# trainers that stopped on the terminal's Ctrl-C exit 0 like finished ones: a stop still
	[ -n "$STOP_SIG" ] && stop_on_request
	if [ ${#DONE[@]} = "$N" ]; then
		relay
		say "all $N trainer rank(s) finished"
		cleanup
		summary
		exit 0
	fi
	printf -v now '%(%s)T' -1 # (a builtin: no command substitution for a signal to land in)
	if [ $((now - last_progress)) -ge 10 ] && [ -s "$RUN_DIR/metrics.jsonl" ]; then
		last_progress=$now
		progress
	fi
done
