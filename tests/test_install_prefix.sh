#!/usr/bin/env bash
# `make install PREFIX=P` puts everything under P (programs in P/bin, the example environment in
# P/etc/avclip, units in P/lib/systemd/system, naming P's programs and environment file), and
# SYSCONFDIR / UNITDIR move only what they name.
set -u
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
p=$tmp/prefix
# with make test-san's sanitizer (RING_SAN) when its tree is the BUILD
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s SAN="${RING_SAN:-}" "$@"; }
mk install-systemd PREFIX="$p" BUILD="${BUILD:-build}" >"$tmp/log" 2>&1 || fail "make install-systemd: $(tail -n 5 "$tmp/log")"
[ -f "$p/etc/avclip/avclip.env" ] || fail "no $p/etc/avclip/avclip.env: $(find "$tmp" -type f | head)"
[ -f "$p/lib/systemd/system/avclip-trainer@.service" ] || fail "no units in $p/lib/systemd/system"
grep -q "^EnvironmentFile=$p/etc/avclip/avclip.env$" "$p/lib/systemd/system/avclip-trainer@.service" ||
	fail "the trainer unit reads another environment file: $(grep EnvironmentFile "$p/lib/systemd/system/avclip-trainer@.service")"
grep -q "^ExecStart=$p/bin/avclip-trainer " "$p/lib/systemd/system/avclip-trainer@.service" || fail "the unit runs another trainer"
outside=$(find "$tmp" -type f ! -path "$p/*" ! -path "$tmp/log")
[ -z "$outside" ] || fail "installed outside the prefix: $outside"
# the programs' destinations, as make would run them
mk -n install PREFIX="$p" BUILD="${BUILD:-build}" 2>/dev/null | grep -E '^\s*(for p in|install )' >"$tmp/cmds"
grep -q "install -d $p/bin" "$tmp/cmds" || fail "programs not installed into $p/bin: $(cat "$tmp/cmds")"
grep -q "$p/bin/avclip-launch" "$tmp/cmds" || fail "the launcher not installed into $p/bin"
# SYSCONFDIR and UNITDIR move what they name, nothing else
mk install-systemd PREFIX="$p" SYSCONFDIR="$tmp/etc" UNITDIR="$tmp/units" >"$tmp/log" 2>&1 || fail "with SYSCONFDIR, UNITDIR"
[ -f "$tmp/etc/avclip/avclip.env" ] && [ -f "$tmp/units/avclip-ring.service" ] || fail "SYSCONFDIR/UNITDIR not used"
grep -q "^EnvironmentFile=$tmp/etc/avclip/avclip.env$" "$tmp/units/avclip-ring.service" || fail "the ring unit does not read SYSCONFDIR's file"
grep -q "$p/bin/avclip-ringctl" "$tmp/units/avclip-ring.service" || fail "BINDIR left the prefix"
echo "ok: everything under PREFIX; SYSCONFDIR and UNITDIR move the environment file and the units"
