#!/usr/bin/env bash
# No folder includes a header from a folder above it (or beside it): every #include "x.h" of a
# source or header under a folder must name a header of that folder or of a folder it uses, as
# DESIGN §2 draws the arrows: tools -> trainer, eval -> model -> kernels -> stream, data, common. The graph
# is the one the Makefile's USES_<dir> lists turn into include paths (read from the fragments). Tests (tests/) may include
# anything. The checker first proves on a scratch tree that it catches an upward include.
set -u
cd "$(dirname "$0")/.."

# folder -> the folders it may include from (besides itself and its own subfolders): the USES_<dir>
# lines of the module fragments, the very lists the Makefile turns into include paths; a folder
# with sources but no USES line is an error, so a new folder cannot escape the check
declare -A USES=([systemd]="")
while IFS= read -r line; do
	key=${line%%:=*} key=${key#USES_} key=${key%% *}
	USES[$key]=$(echo ${line#*:=})
done < <(grep -h '^USES_[A-Za-z0-9/_-]* *:=' */module*.mk */*/module*.mk)
for d in common data stream eval model kernels loaderd shm-layout trainer trainer/comm trainer/fastclip tools; do
	[ -n "${USES[$d]+x}" ] || { echo "FAIL: no USES_$d line in a module fragment"; exit 1; }
done
for d in */; do # every top-level folder with C sources is in the graph
	d=${d%/}
	case $d in build | tests | mk | docs) continue ;; esac
	if [ -z "${USES[$d]+x}" ] && [ -n "$(find "$d" -maxdepth 1 \( -name '*.c' -o -name '*.h' \) -print -quit)" ]; then
		echo "FAIL: folder $d has sources but no USES_$d line in its module fragment"
		exit 1
	fi
done

# the folder of USES a path lies in (the longest match: model before trainer)
folder_of() {
	local p=$1 best="" f
	for f in "${!USES[@]}"; do
		case $p in "$f"/*) [ ${#f} -gt ${#best} ] && best=$f ;; esac
	done
	echo "$best"
}

# check ROOT: prints each bad include, returns 1 when there is one
check() {
	local root=$1 bad=0 f h src inc owner from
	declare -A where=() # header basename -> its path (relative to root)
	while IFS= read -r h; do where[${h##*/}]=$h; done < <(cd "$root" && find . -path ./build -prune -o -path ./tests -prune \
		-o -name '*.h' -print | sed 's|^\./||')
	while IFS= read -r src; do
		from=$(folder_of "$src")
		[ -n "$from" ] || continue
		while IFS= read -r inc; do
			local path
			if [[ $inc == */* ]]; then # a relative path: resolve it against the including file
				path=$(realpath -m --relative-to="$root" "$root/$(dirname "$src")/$inc")
			else
				path=${where[$inc]:-}
				[ -n "$path" ] || continue # a system or generated header
				[ -e "$root/$(dirname "$src")/$inc" ] && path=$(dirname "$src")/$inc # same folder first
			fi
			owner=$(folder_of "$path")
			[ -z "$owner" ] && [[ $path == tests/* ]] && owner=tests
			[ -n "$owner" ] || continue
			[ "$owner" = "$from" ] && continue
			[[ " ${USES[$from]} " == *" $owner "* ]] && continue
			echo "  $src includes \"$inc\" ($path): $from may not include from $owner"
			bad=1
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$root/$src")
	done < <(cd "$root" && find . -path ./build -prune -o -path ./tests -prune -o \( -name '*.c' -o -name '*.h' \
		-o -name '*.inc' -o -name '*.cu' -o -name '*.cpp' \) -print | sed 's|^\./||')
	return $bad
}

# the checker catches an upward include and a sideways one on a scratch tree
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch"/{common,data,stream,eval,kernels,model,loaderd,shm-layout,trainer/comm,tools}
echo '#include "trainer_step.h"' >"$scratch/model/model_x.c" # up: model -> trainer
: >"$scratch/trainer/trainer_step.h"
echo '#include "comm.h"' >"$scratch/model/model_y.c" # sideways: model -> comm
: >"$scratch/trainer/comm/comm.h"
echo '#include "../tools/eval_x.h"' >"$scratch/kernels/k.c" # up through a relative path
: >"$scratch/tools/eval_x.h"
echo '#include "kern_ops.h"' >"$scratch/model/model_z.c" # allowed: down
: >"$scratch/kernels/kern_ops.h"
# a sideways include into each folder of the bottom layers, from one that does not use it
echo '#include "manifest.h"' >"$scratch/kernels/k2.c" # into data: kernels -> data
: >"$scratch/data/manifest.h"
echo '#include "stream.h"' >"$scratch/data/d.c" # into stream: data -> stream
: >"$scratch/stream/stream.h"
echo '#include "eval.h"' >"$scratch/model/model_e.c" # into eval: model -> eval (up)
: >"$scratch/eval/eval.h"
echo '#include "model.h"' >"$scratch/shm-layout/r.c" # into model: shm-layout -> model
: >"$scratch/model/model.h"
echo '#include "loader.h"' >"$scratch/eval/e.c" # into loaderd: eval -> loaderd
: >"$scratch/loaderd/loader.h"
echo '#include "ring.h"' >"$scratch/stream/s.c" # into shm-layout: stream -> shm-layout
: >"$scratch/shm-layout/ring.h"
out=$(check "$scratch") && { echo "FAIL: the checker missed the scratch tree's bad includes"; exit 1; }
n=$(grep -c 'may not include' <<<"$out")
[ "$n" = 9 ] || { echo "FAIL: the checker found $n bad includes in the scratch tree, want 9:"; echo "$out"; exit 1; }
echo "the checker catches up, sideways and relative includes ($n of 9 in a scratch tree: one into each bottom folder)"

if ! out=$(check .); then
	echo "FAIL: includes that go up or sideways:"
	echo "$out"
	exit 1
fi
echo "no folder includes a header of a folder above or beside it"
