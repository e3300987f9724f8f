#!/usr/bin/env bash
# Every systemd unit, rendered as `make install` renders it (programs from this build tree),
# passes `systemd-analyze verify`, template units through an instance.
set -u
command -v systemd-analyze >/dev/null || { echo "skip: systemd-analyze not installed"; exit 77; }
here=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/etc/avclip" "$tmp/units"
for p in tools/ringctl trainer/trainer loaderd/loaderd; do
	[ -x "$p" ] || { echo "skip: $p is not built"; exit 77; }
	ln -s "$here/$p" "$tmp/bin/avclip-$(basename "$p")"
done
cp systemd/avclip.env.example "$tmp/etc/avclip/avclip.env"
for u in systemd/*.service.in; do
	sed -e "s|@BINDIR@|$tmp/bin|g" -e "s|@SYSCONFDIR@|$tmp/etc|g" "$u" >"$tmp/units/$(basename "$u" .in)"
done
cp systemd/avclip.target "$tmp/units/"
ln -s avclip-loaderd@.service "$tmp/units/avclip-loaderd@0.service"
bash systemd/numa-dropin.sh 0 "$tmp/units"
grep -q '^NUMAMask=0$' "$tmp/units/avclip-loaderd@0.service.d/numa.conf" || { echo "FAIL: no NUMA drop-in"; exit 1; }
ln -s avclip-trainer@.service "$tmp/units/avclip-trainer@3.service"
rc=0
for u in avclip.target avclip-ring.service avclip-stop.service avclip-loaderd@0.service avclip-trainer@3.service; do
	out=$(cd "$tmp/units" && systemd-analyze verify --man=no "./$u" 2>&1)
	st=$?
	# a container without systemd as init cannot answer for /bin/systemctl's bus; nothing else may show
	out=$(grep -v -e 'Failed to connect to bus' -e 'Cannot find unit for' <<<"$out")
	if [ $st != 0 ] || [ -n "$out" ]; then
		echo "FAIL: $u"
		echo "$out"
		rc=1
	else
		echo "ok: $u"
	fi
done
# the units name the queries and flags the programs really have
for f in "query comm-create" "query comm-unlink" "query resume-position" "query geometry"; do
	trainer/trainer --help | grep -q -- "trainer $f " || { echo "FAIL: trainer has no $f"; rc=1; }
done
for f in --numa-node --workers --manifest --ring; do
	loaderd/loaderd --help | grep -q -- "$f" || { echo "FAIL: loaderd has no $f"; rc=1; }
done
# every variable a unit reads is set in the example environment file
for v in $(grep -ohE '\$\{?\$?\{?AVCLIP_[A-Z_]+' systemd/*.service.in | grep -oE 'AVCLIP_[A-Z_]+' | sort -u); do
	grep -q "^$v=" systemd/avclip.env.example || { echo "FAIL: the units read $v, which avclip.env.example does not set"; rc=1; }
done
# the trainer gets from the environment file what launch.sh passes it from the manifest and the machine
for f in "--manifest \${AVCLIP_MANIFEST}" "--dataset-size \${AVCLIP_DATASET_SIZE}" "--vocab \${AVCLIP_VOCAB}" \
	"--backend \${AVCLIP_BACKEND}"; do
	grep -qF -- "$f" systemd/avclip-trainer@.service.in || { echo "FAIL: the trainer unit does not pass $f as launch.sh does"; rc=1; }
done
exit $rc
