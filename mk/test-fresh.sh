#!/usr/bin/env bash
# make test-fresh: the README's first two commands, exactly as written there, as root on a fresh
# minimal Debian 12 (debootstrap --variant=minbase with git, ca-certificates and make; no CUDA
# toolkit, so also the CPU-only user's machine), in a clone of this checkout's HEAD.
#
#   mk/test-fresh.sh [--keep] [--shell]
#     --keep    leave the root in $BUILD/fresh/root afterwards (it is removed and made anew each run)
#     --shell   after the commands, an interactive shell inside the root (implies --keep)
#
# Environment: BUILD (build), FRESH_CACHE (where the bootstrapped root is kept as a tarball
# between runs: $BUILD/fresh), FRESH_MIRROR (the Debian mirror debootstrap and apt-get use: the first one this
# machine's apt sources name, else deb.debian.org), MAKEFLAGS (passed on, so `make test-fresh -j2`
# builds with two jobs inside too; the README's commands themselves are run unchanged).
#
# The root runs in its own mount and PID namespace: /proc, /sys, /dev and a private /dev/shm are
# mounted for it there and vanish with it, and every process it started ends when it ends.
# Committed work only: a clone takes HEAD, so uncommitted changes are not tested (said below).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
build=${BUILD:-build}
keep=0 shell=0
for a in "$@"; do
	case $a in
	--keep) keep=1 ;;
	--shell) keep=1 shell=1 ;;
	-h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "test-fresh: unknown argument '$a' (try --help)" >&2; exit 2 ;;
	esac
done
say() { printf 'test-fresh: %s\n' "$*"; }
die() { printf 'test-fresh: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts): sudo make test-fresh"
for c in git unshare chroot; do command -v $c >/dev/null || die "needs $c"; done
if ! command -v debootstrap >/dev/null; then
	say "installing debootstrap (apt-get)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null; } ||
		die "cannot install debootstrap (apt-get install debootstrap)"
fi

mirror=${FRESH_MIRROR:-}
if [ -z "$mirror" ]; then
	mirror=$(grep -hsE '^(URIs:|deb) ' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list |
		grep -v security | sed -E 's/^URIs: +//; s/^deb +(\[[^]]*\] +)?//' | awk '{print $1; exit}' || true)
	mirror=${mirror:-http://deb.debian.org/debian}
fi
include=git,ca-certificates,make
fresh=$build/fresh
cache=${FRESH_CACHE:-$fresh}
tarball=$cache/bookworm-minbase-$(echo "$include" | tr , -).tgz
root=$(realpath -m "$fresh/root")
log=$fresh/log
mkdir -p "$fresh" "$cache"

# a root left by an interrupted run: never delete through a mount that is still there
if grep -qs " $root[/ ]" /proc/mounts; then die "$root still has mounts (see /proc/mounts); unmount them first"; fi
rm -rf --one-file-system "$root"

t0=$(date +%s)
if [ -s "$tarball" ]; then
	say "making the root $root from $tarball"
	mkdir -p "$root"
	tar -C "$root" -xzf "$tarball" || die "cannot unpack $tarball (delete it to download again)"
else
	say "debootstrap --variant=minbase --include=$include bookworm from $mirror (once; kept in $tarball)"
	debootstrap --variant=minbase --include=$include bookworm "$root" "$mirror" >"$fresh/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$fresh/debootstrap.log"; die "debootstrap failed (log: $fresh/debootstrap.log)"; }
	rm -f "$root"/var/cache/apt/archives/*.deb
	tar -C "$root" -czf "$tarball.part" . && mv -f "$tarball.part" "$tarball"
fi
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
[ -s "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
t1=$(date +%s)

git -C "$src" diff --quiet HEAD 2>/dev/null || say "note: this checkout has uncommitted changes; the fresh root tests HEAD ($(git -C "$src" rev-parse --short HEAD))"
git clone -q --no-hardlinks "$src" "$root/root/avclip"
say "cloned $(git -C "$root/root/avclip" rev-parse --short HEAD) into /root/avclip"

# the README's first two commands, as its "First two commands" block writes them
mapfile -t cmds < <(awk '/^## First two commands/ {f=1; next} f && /^```sh/ {b=1; next} b && /^```/ {exit} b' README.md |
	sed -E 's/[[:space:]]+#.*$//; /^[[:space:]]*$/d')
[ ${#cmds[@]} = 2 ] || die "README.md's 'First two commands' block should hold two commands, found ${#cmds[@]}"
script="set -e; cd /root/avclip"
for c in "${cmds[@]}"; do
	script+="; echo \"test-fresh: \$ $c\"; s=\$(date +%s); $c; echo \"test-fresh: '$c' passed in \$((\$(date +%s) - s)) s\""
done
[ $shell = 1 ] && script+="; echo 'test-fresh: shell inside the fresh root (exit to leave)'; bash -i </dev/tty >/dev/tty 2>&1"

say "running, as root in the fresh root: ${cmds[*]} (log: $log)"
set +e
unshare --mount --pid --fork --propagation private bash -c '
	set -e
	r=$1; shift
	mount -t proc proc "$r/proc"
	mount --rbind /sys "$r/sys"
	mount --rbind /dev "$r/dev"
	mount -t tmpfs -o mode=1777,size=50% tmpfs "$r/dev/shm"
	exec chroot "$r" /usr/bin/env -i HOME=/root USER=root LOGNAME=root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin MAKEFLAGS="$2" bash -c "$1"
' fresh "$root" "$script" "${MAKEFLAGS:-}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
t2=$(date +%s)
[ $keep = 1 ] || rm -rf --one-file-system "$root"
say "root ready in $((t1 - t0)) s, commands $((t2 - t1)) s"
if [ "$rc" = 0 ]; then
	say "passed: the README's first two commands work on a fresh Debian 12 root"
else
	die "FAILED (exit $rc): the README's first two commands on a fresh Debian 12 root; log: $log${keep:+}"
fi
