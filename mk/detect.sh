#!/usr/bin/env bash
# Detects optional dependencies by test-compiling a tiny program against each, writes
# a make fragment (HAVE_X, flags) to $1 and prints a ✓/✗ summary. Opt out with WITH_X=0.
set -u
out=${1:?usage: detect.sh OUT.mk}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cuda_home=${CUDA_HOME:-/usr/local/cuda}
[ -d "$cuda_home" ] || cuda_home=$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /x/x/x)")")

summary=()
missing_pkgs=()
mk=()

# try NAME "DEBIAN-PKGS" SOURCE CFLAGS LDLIBS -> sets HAVE_NAME, NAME_CFLAGS, NAME_LIBS
try() {
	local name=$1 pkgs=$2 src=$3 cflags=$4 libs=$5 what=$6
	local optvar="WITH_$name"
	if [ "${!optvar:-1}" = 0 ]; then
		mk+=("HAVE_$name := 0")
		summary+=("  - $what (disabled by $optvar=0)")
		return
	fi
	printf '%s\n' "$src" >"$tmp/t.c"
	# shellcheck disable=SC2086
	if $cc $cflags "$tmp/t.c" -o "$tmp/t" $libs >"$tmp/log" 2>&1; then
		mk+=("HAVE_$name := 1" "${name}_CFLAGS := $cflags" "${name}_LIBS := $libs")
		summary+=("  ✓ $what")
	else
		mk+=("HAVE_$name := 0")
		summary+=("  ✗ $what${pkgs:+ (apt: $pkgs)}")
		[ -n "$pkgs" ] && missing_pkgs+=($pkgs)
	fi
}

pc() { pkg-config "$@" 2>/dev/null; }

# the compiler and pkg-config first: without them every library below reads as missing, and
# make deps must know that build-essential / pkg-config are what is needed
printf 'int main(void){ return 0; }\n' >"$tmp/cc.c"
if $cc "$tmp/cc.c" -o "$tmp/cc" >"$tmp/log" 2>&1; then
	summary+=("  ✓ C compiler ($cc)")
else
	summary+=("  ✗ C compiler ($cc; apt: build-essential)")
	missing_pkgs+=(build-essential)
fi
if command -v pkg-config >/dev/null 2>&1; then
	summary+=("  ✓ pkg-config")
else
	summary+=("  ✗ pkg-config (apt: pkg-config)")
	missing_pkgs+=(pkg-config)
fi

try OPENMP "" '#include <omp.h>
int main(void){ return omp_get_max_threads() > 0 ? 0 : 1; }' "-fopenmp" "-fopenmp" "OpenMP"

try BLAS "libopenblas-dev" '#include <cblas.h>
int main(void){ float a=1,b=1,c=0; cblas_sgemm(CblasRowMajor,CblasNoTrans,CblasNoTrans,1,1,1,1.f,&a,1,&b,1,0.f,&c,1); return c == 1.f ? 0 : 1; }' \
	"$(pc --cflags openblas || echo -I/usr/include/x86_64-linux-gnu/openblas-pthread)" "$(pc --libs openblas || echo -lopenblas)" "BLAS (OpenBLAS cblas_sgemm)"

try NUMA "libnuma-dev" '#include <numa.h>
int main(void){ return numa_available() < -1; }' "" "-lnuma" "libnuma"

try URING "liburing-dev" '#include <liburing.h>
int main(void){ struct io_uring_params p = {0}; (void)p; return io_uring_queue_init(0, 0, 0) == 12345; }' "$(pc --cflags liburing)" "$(pc --libs liburing || echo -luring)" "liburing"

try LIBAV "libavformat-dev libavcodec-dev libswscale-dev libavutil-dev" '#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
int main(void){ return avformat_version() == 0 || avcodec_version() == 0 || swscale_version() == 0; }' \
	"$(pc --cflags libavformat libavcodec libswscale libavutil)" "$(pc --libs libavformat libavcodec libswscale libavutil || echo -lavformat -lavcodec -lswscale -lavutil)" \
	"FFmpeg libs (libavformat, libavcodec, libswscale)"

try UTF8PROC "libutf8proc-dev" '#include <utf8proc.h>
int main(void){ return utf8proc_tolower(0x41) == 0x61 ? 0 : 1; }' "$(pc --cflags libutf8proc)" "$(pc --libs libutf8proc || echo -lutf8proc)" "utf8proc (Unicode data for the tokenizer)"

try ZLIB "zlib1g-dev" '#include <zlib.h>
int main(void){ return zlibVersion() == 0; }' "$(pc --cflags zlib)" "$(pc --libs zlib || echo -lz)" "zlib (gzipped merges files)"

try FREETYPE "libfreetype-dev" '#include <ft2build.h>
#include FT_FREETYPE_H
int main(void){ FT_Library l; return FT_Init_FreeType(&l) == 12345; }' \
	"$(pc --cflags freetype2 || echo -I/usr/include/freetype2)" "$(pc --libs freetype2 || echo -lfreetype)" "FreeType (UTF-8 captions in clipdump)"
# a data package, not a library: clipdump falls back to its bitmap font without it
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
if [ -r "$font" ]; then
	summary+=("  ✓ DejaVu Sans font ($font)")
else
	summary+=("  ✗ DejaVu Sans font (apt: fonts-dejavu-core; clipdump uses its bitmap font without it)")
	missing_pkgs+=(fonts-dejavu-core)
fi

# CUDA: nvcc must compile a kernel; cuBLAS and NCCL must link against the toolkit.
nvcc=${NVCC:-$(command -v nvcc || echo "$cuda_home/bin/nvcc")}
if [ "${WITH_CUDA:-1}" != 0 ] && [ -x "$nvcc" ] && printf '__global__ void k(int *p){ *p = 1; }\nint main(void){ return 0; }\n' >"$tmp/t.cu" \
	&& "$nvcc" -c "$tmp/t.cu" -o "$tmp/t.o" >"$tmp/log" 2>&1; then
	mk+=("HAVE_NVCC := 1" "NVCC := $nvcc" "CUDA_HOME := $cuda_home")
	summary+=("  ✓ nvcc ($("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))")
else
	mk+=("HAVE_NVCC := 0")
	summary+=("  ✗ nvcc (CUDA toolkit; install it from NVIDIA, or WITH_CUDA=0)")
fi
cuda_inc="-isystem $cuda_home/include" # system: its headers are not held to our warnings
cuda_lib="-L$cuda_home/lib64 -Wl,-rpath,$cuda_home/lib64"
try CUDART "" '#include <cuda_runtime.h>
int main(void){ int n = 0; return cudaGetDeviceCount(&n) == 12345; }' "$cuda_inc" "$cuda_lib -lcudart" "CUDA runtime"
try CUBLAS "" '#include <cublas_v2.h>
int main(void){ cublasHandle_t h; return cublasCreate(&h) == 12345; }' "$cuda_inc" "$cuda_lib -lcublas -lcublasLt -lcudart" "cuBLAS / cuBLASLt"
# cuDNN and NCCL: in the toolkit, else in a Python wheel (nvidia-cudnn-cu*, nvidia-nccl-cu* in the
# site-packages of any python3 on PATH: the venv that holds PyTorch has them), else in the system's
# folders. A wheel ships only the versioned library (libcudnn.so.9, libnccl.so.2), so the name
# the folder has is linked (-l:libcudnn.so.9), and the folder goes into the rpath so that the
# programs find it at run time. A place counts only where its include/ has the header; the last
# try is the compiler's own folders. ldd on the test program says which file was taken.
multiarch=$($cc -print-multiarch 2>/dev/null)
# cuda_lib_at INCLUDE-DIR LIB-DIR WHERE: test-compiles $tmp/t.c against lib$lib there; on success
# appends HAVE_$name and its flags (name, lib, sover, header, what: try_cuda_lib's locals)
cuda_lib_at() {
	local inc=$1 dir=$2 where=$3 l=-l$lib cflags libs found
	looked+=("$dir")
	[ "$where" = "the compiler's folders" ] || [ -e "$inc/$header" ] || return 1
	[ ! -e "$dir/lib$lib.so" ] && [ -e "$dir/lib$lib.so.$sover" ] && l=-l:lib$lib.so.$sover
	case $where in
	"the toolkit") cflags=$cuda_inc libs="$cuda_lib $l -lcudart" ;;
	"the compiler's folders") cflags=$cuda_inc libs="$l $cuda_lib -lcudart" ;;
	*) cflags="-isystem $inc $cuda_inc" libs="-L$dir -Wl,-rpath,$dir $l $cuda_lib -lcudart" ;;
	esac
	# shellcheck disable=SC2086
	$cc $cflags "$tmp/t.c" -o "$tmp/t" $libs >"$tmp/log" 2>&1 || return 1
	# the file the program loads: a library the loader cannot find at run time is no success
	found=$(ldd "$tmp/t" 2>/dev/null | awk -v l="lib$lib.so" 'index($1, l) == 1 { print $3; exit }')
	[ "$found" = not ] && return 1
	mk+=("HAVE_$name := 1" "${name}_CFLAGS := $cflags" "${name}_LIBS := $libs")
	summary+=("  ✓ $what (${found:-$dir/lib$lib.so*}, from $where)")
}
# try_cuda_lib NAME LIB SOVERSION PYMODULE HEADER SOURCE WHAT -> HAVE_NAME, NAME_CFLAGS, NAME_LIBS
try_cuda_lib() {
	local name=$1 lib=$2 sover=$3 pymod=$4 header=$5 src=$6 what=$7 optvar="WITH_$1" looked=() py real dir seen=" "
	if [ "${!optvar:-1}" = 0 ]; then
		mk+=("HAVE_$name := 0")
		summary+=("  - $what (disabled by $optvar=0)")
		return
	fi
	printf '%s\n' "$src" >"$tmp/t.c"
	cuda_lib_at "$cuda_home/include" "$cuda_home/lib64" "the toolkit" && return
	for py in $(type -ap python3 2>/dev/null); do
		real=$(readlink -f "$py") || continue
		case $seen in *" $real "*) continue ;; esac
		seen+="$real "
		# nvidia/ is a namespace package: __path__ names the folder with or without an __init__.py
		dir=$(timeout 30 "$py" -c "import $pymod as m; print(list(m.__path__)[0])" 2>/dev/null) || continue
		[ -d "$dir" ] && cuda_lib_at "$dir/include" "$dir/lib" "the Python wheel of $py" && return
	done
	cuda_lib_at /usr/include "/usr/lib${multiarch:+/$multiarch}" "the compiler's folders" && return
	mk+=("HAVE_$name := 0")
	summary+=("  ✗ $what (looked in ${looked[*]} and the wheels of every python3 on PATH; pip install nvidia-${pymod#nvidia.}-cu<CUDA major>)")
}
try_cuda_lib NCCL nccl 2 nvidia.nccl nccl.h '#include <nccl.h>
int main(void){ int v; return ncclGetVersion(&v) == 12345; }' "NCCL"
try_cuda_lib CUDNN cudnn 9 nvidia.cudnn cudnn.h '#include <cudnn.h>
#if CUDNN_MAJOR < 9
#error cuDNN 9 or newer
#endif
int main(void){ return cudnnGetVersion() == 12345; }' "cuDNN 9"

# The execution shim (kernels/cuda/emu) builds the own CUDA kernels with g++ against the
# toolkit's headers (cuda_runtime.h for the types, cuda_bf16.h's host path); no GPU needed.
cxx=${CXX:-g++}
if [ "${WITH_CUDA:-1}" = 0 ]; then
	mk+=("HAVE_CUDA_EMU := 0")
	summary+=("  - CUDA execution shim (disabled by WITH_CUDA=0)")
else
	printf '%s\n' '#include <cuda_runtime.h>' '#include <cuda_bf16.h>' '#include <tuple>' \
		'int main() { dim3 d(2); float4 f = make_float4(1, 2, 3, 4); __nv_bfloat16 b = __float2bfloat16(f.y);' \
		'  return std::get<0>(std::make_tuple((int)d.y - (int)__bfloat162float(b) + 1)); }' >"$tmp/t.cpp"
	# shellcheck disable=SC2086
	if "$cxx" -std=c++17 $cuda_inc "$tmp/t.cpp" -o "$tmp/t" >"$tmp/log" 2>&1 && "$tmp/t"; then
		mk+=("HAVE_CUDA_EMU := 1" "CXX := $cxx" "CUDA_EMU_CFLAGS := $cuda_inc")
		summary+=("  ✓ CUDA execution shim (g++ with the toolkit's headers)")
	else
		mk+=("HAVE_CUDA_EMU := 0")
		summary+=("  ✗ CUDA execution shim (needs g++ and the CUDA toolkit's headers)")
	fi
fi

{
	echo "# generated by mk/detect.sh; delete this file (or run make config) to detect again"
	printf '%s\n' "${mk[@]}"
	echo "DEPS_MISSING := ${missing_pkgs[*]:-}"
} >"$out"

echo "configuration (detected by test-compiling):"
printf '%s\n' "${summary[@]}"
if [ ${#missing_pkgs[@]} -gt 0 ]; then
	echo "  missing Debian packages: ${missing_pkgs[*]} (run: make deps)"
fi
