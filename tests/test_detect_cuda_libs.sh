#!/usr/bin/env bash
# mk/detect.sh finds cuDNN and NCCL where GPU machines have them (issue 24 §5): a toolkit without
# them (a copy of this one's with cudnn* and nccl* left out) and a Python wheel layout on the
# PATH's python3 (nvidia/cudnn/{include,lib}, nvidia/nccl/{include,lib}, only the versioned
# libcudnn.so.9 / libnccl.so.2, as the wheels ship them): each must be found in the wheel, linked
# by its versioned name with the folder in the rpath, named in the ✓ line, and a program built
# with the detected flags must load it from there. With the real toolkit the flags stay the
# toolkit's. Every other detection is switched off (WITH_X=0), so this takes seconds.
# Skips (77) without a CUDA toolkit that has cuDNN 9 and NCCL.
set -uo pipefail
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
cuda=${CUDA_HOME:-/usr/local/cuda}
real_cudnn=$cuda/lib64/libcudnn.so.9 real_nccl=$cuda/lib64/libnccl.so.2
for f in "$cuda/include/cudnn.h" "$cuda/include/nccl.h" "$real_cudnn" "$real_nccl" "$cuda/lib64/libcudart.so"; do
	[ -e "$f" ] || { echo "skip: no $f (a CUDA toolkit with cuDNN 9 and NCCL)"; exit 77; }
done
d=$(mktemp -d /tmp/test_detect_cuda_libs.XXXXXX)
trap 'rm -rf "$d"' EXIT
# detect.sh with only the CUDA runtime, NCCL and cuDNN left to detect
detect() {
	env WITH_OPENMP=0 WITH_BLAS=0 WITH_NUMA=0 WITH_URING=0 WITH_LIBAV=0 WITH_UTF8PROC=0 WITH_ZLIB=0 WITH_FREETYPE=0 \
		WITH_CUBLAS=0 WITH_CUDA=0 "$@" bash mk/detect.sh "$d/config.mk" >"$d/summary" 2>&1 || fail "detect.sh failed: $(cat "$d/summary")"
}
val() { sed -n "s/^$1 := //p" "$d/config.mk"; }

# 1. the real toolkit: found there, with the flags detect.sh always wrote
detect CUDA_HOME="$cuda"
for n in CUDNN NCCL; do
	[ "$(val HAVE_$n)" = 1 ] || fail "with the toolkit at $cuda: HAVE_$n is not 1: $(cat "$d/summary")"
	[ "$(val ${n}_CFLAGS)" = "-isystem $cuda/include" ] || fail "toolkit ${n}_CFLAGS changed: $(val ${n}_CFLAGS)"
done
lt="-L$cuda/lib64 -Wl,-rpath,$cuda/lib64"
[ "$(val CUDNN_LIBS)" = "$lt -lcudnn -lcudart" ] || fail "toolkit CUDNN_LIBS changed: $(val CUDNN_LIBS)"
[ "$(val NCCL_LIBS)" = "$lt -lnccl -lcudart" ] || fail "toolkit NCCL_LIBS changed: $(val NCCL_LIBS)"
grep -q "✓ cuDNN 9 (.*from the toolkit)" "$d/summary" || fail "the ✓ line does not say the toolkit: $(cat "$d/summary")"

# 2. a toolkit copy without cuDNN and NCCL
tk=$d/cuda
mkdir -p "$tk/include" "$tk/lib64"
for f in "$cuda"/include/*; do
	case ${f##*/} in cudnn* | nccl*) ;; *) ln -s "$f" "$tk/include/" ;; esac
done
for f in "$cuda"/lib64/*; do
	case ${f##*/} in libcudnn* | libnccl*) ;; *) ln -s "$f" "$tk/lib64/" ;; esac
done
# the wheels' layout: headers from the toolkit, each library only under its versioned name
site=$d/site
mkdir -p "$site/nvidia/cudnn/include" "$site/nvidia/cudnn/lib" "$site/nvidia/nccl/include" "$site/nvidia/nccl/lib"
ln -s "$cuda"/include/cudnn*.h "$site/nvidia/cudnn/include/"
ln -s "$cuda"/include/nccl*.h "$site/nvidia/nccl/include/"
ln -s "$real_cudnn" "$site/nvidia/cudnn/lib/libcudnn.so.9"
ln -s "$real_nccl" "$site/nvidia/nccl/lib/libnccl.so.2"
# cuDNN 9 loads its sub-libraries (libcudnn_graph.so.9, ...) from its own folder ($ORIGIN)
for f in "$cuda"/lib64/libcudnn_*.so.9; do ln -s "$f" "$site/nvidia/cudnn/lib/"; done
# python3 first on PATH: the real interpreter with the fake site-packages (nvidia/ a namespace
# package, no __init__.py, as the wheels install it), else a stand-in that prints the folder
bin=$d/bin
mkdir -p "$bin"
if py=$(command -v python3) && "$py" -c 'import sys; sys.exit(sys.version_info < (3, 3))' 2>/dev/null; then
	printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$site" "$py" >"$bin/python3"
else
	printf '#!/bin/sh\ncase "$*" in *nvidia.cudnn*) echo %s ;; *nvidia.nccl*) echo %s ;; *) exit 1 ;; esac\n' \
		"$site/nvidia/cudnn" "$site/nvidia/nccl" >"$bin/python3"
fi
chmod +x "$bin/python3"
detect CUDA_HOME="$tk" PATH="$bin:$PATH"
for n in cudnn:CUDNN:9 nccl:NCCL:2; do
	IFS=: read -r lib N v <<<"$n"
	w=$site/nvidia/$lib
	[ "$(val HAVE_$N)" = 1 ] || fail "the $lib wheel at $w was not found: $(cat "$d/summary")"
	case " $(val ${N}_CFLAGS) " in *" -isystem $w/include "*) ;; *) fail "${N}_CFLAGS lacks the wheel's include/: $(val ${N}_CFLAGS)" ;; esac
	case " $(val ${N}_LIBS) " in *" -Wl,-rpath,$w/lib "*"-l:lib$lib.so.$v "*) ;; *) fail "${N}_LIBS does not link lib$lib.so.$v with the wheel's lib/ in the rpath: $(val ${N}_LIBS)" ;; esac
	grep -q "✓ .*($w/lib/lib$lib.so.$v, from the Python wheel of $bin/python3)" "$d/summary" ||
		fail "the ✓ line does not name the wheel: $(grep -e NCCL -e cuDNN "$d/summary")"
done

# 3. a program built with those flags runs and loads both from the wheel folders
cat >"$d/p.c" <<'EOF'
#include <cudnn.h>
#include <nccl.h>
#include <stdio.h>
int main(void)
{
	int v = 0;
	if (ncclGetVersion(&v) != ncclSuccess)
		return 1;
	printf("cudnn %zu nccl %d\n", cudnnGetVersion(), v);
	return 0;
}
EOF
# shellcheck disable=SC2046
cc $(val CUDNN_CFLAGS) $(val NCCL_CFLAGS) "$d/p.c" -o "$d/p" $(val CUDNN_LIBS) $(val NCCL_LIBS) 2>"$d/cc.log" ||
	fail "a program with the detected flags does not build: $(cat "$d/cc.log")"
out=$("$d/p") || fail "the program does not run: $out"
libs=$(ldd "$d/p")
grep -q "libcudnn.so.9 => $site/nvidia/cudnn/lib/libcudnn.so.9" <<<"$libs" || fail "libcudnn not loaded from the wheel: $libs"
grep -q "libnccl.so.2 => $site/nvidia/nccl/lib/libnccl.so.2" <<<"$libs" || fail "libnccl not loaded from the wheel: $libs"

# 4. nowhere: ✗, and the line says where it looked (unless the compiler finds them in its own folders
# or a python3 of this machine has the wheels)
elsewhere=0
printf '#include <cudnn.h>\n#include <nccl.h>\n' | cc -E -x c - >/dev/null 2>&1 && elsewhere=1
for p in $(type -ap python3); do "$p" -c 'import nvidia.cudnn' 2>/dev/null && elsewhere=1; done
missing="reported missing where neither is"
if [ $elsewhere = 1 ]; then
	missing="(the compiler or a python3 here finds them outside the toolkit: the not-found case is not checked)"
else
	detect CUDA_HOME="$tk"
	[ "$(val HAVE_CUDNN)$(val HAVE_NCCL)" = 00 ] || fail "found cuDNN or NCCL with neither toolkit nor wheel: $(cat "$d/summary")"
	grep -q "✗ cuDNN 9 (looked in $tk/lib64 .*/usr/lib" "$d/summary" || fail "the ✗ line does not say where it looked: $(cat "$d/summary")"
fi
echo "ok: cuDNN and NCCL found in the toolkit, in a wheel layout (.so.9/.so.2 only, rpath; $out), $missing"
