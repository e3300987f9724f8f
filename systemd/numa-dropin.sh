#!/usr/bin/env bash
# numa-dropin.sh NODE UNITDIR: writes the drop-in that pins avclip-loaderd@NODE to its NUMA node
# (CPUs and memory); systemd expands no specifiers in NUMAMask=, hence one file per node.
set -eu
node=$1 dir=$2/avclip-loaderd@$1.service.d
mkdir -p "$dir"
printf '[Service]\nNUMAPolicy=bind\nNUMAMask=%s\nCPUAffinity=numa\n' "$node" >"$dir/numa.conf"
