#!/usr/bin/env bash
# The README's "Your own videos and images" walkthrough, run as written: each ```sh block of
# that section, with its variable lines (videos=..., captions=..., ...) pointed at small
# synthetic data made here (tools/synth) and everything written under a scratch folder. A
# command marked "# in another shell" runs beside the command before it, as a user would run it
# in a second terminal. Training runs 40 steps instead of the README's (--steps and --eval-every
# are rewritten: the commands are what is checked here, not the model). Every command must
# succeed; then the results are checked.
set -uo pipefail
cd "$(dirname "$0")/.."
fail() { echo "FAIL: $*"; exit 1; }
for b in tools/synth tools/prep tools/launch.sh tools/eval tools/plot tools/export tools/ringstat trainer/trainer loaderd/loaderd; do
	[ -x "$b" ] || { echo "skip: $b is not built"; exit 77; }
done
d=$(mktemp -d /tmp/test_readme_own_data.XXXXXX)
trap 'rm -rf "$d"' EXIT

tools/synth --out "$d/src" --videos 2 --heldout 1 --minutes 0.5 --size 160x96 --fps 8 --images 96 --shard-size 32 >"$d/synth.log" 2>&1 ||
	{ cat "$d/synth.log"; fail "synth"; }
mkdir -p "$d/src/heldout-shards"
mv "$d/src/shards"/heldout-*.tar "$d/src/heldout-shards/" || fail "synth wrote no held-out shard"
declare -A val=(
	[videos]="$d/src/videos" [captions]="$d/src/train.csv" [heldout]="$d/src/heldout.csv"
	[shards]="$d/src/shards" [heldout_shards]="$d/src/heldout-shards" [data]="$d/data"
	[run]="$d/runs/mine" [image_run]="$d/runs/images"
)

# the section's sh blocks, continuation lines joined, one command per line
awk '/^## Your own videos and images/ {f=1; next} f && /^## / {exit} f && /^```sh/ {b=1; next} b && /^```/ {b=0; print "#--block"; next} b' README.md |
	awk '{ if (sub(/\\$/, "")) { buf = buf $0; next } print buf $0; buf = "" }' >"$d/cmds"
[ "$(grep -c . "$d/cmds")" -ge 8 ] || fail "README.md has no 'Your own videos and images' section with sh blocks"

script=$d/script.sh
mapfile -t lines < <(grep -vx '#--block' "$d/cmds")
{
	echo 'set -e'
	for ((i = 0; i < ${#lines[@]}; i++)); do
		line=${lines[i]}
		if [[ $line =~ ^([a-z_]+)=([^[:space:]]*) ]]; then
			name=${BASH_REMATCH[1]}
			[ -n "${val[$name]:-}" ] || { echo "echo 'FAIL: the README sets $name, which this test does not know'; exit 1"; continue; }
			printf '%s=%q\n' "$name" "${val[$name]}"
			continue
		fi
		[[ $line == *"# in another shell"* ]] && continue # run beside the command before it (below)
		cmd=${line%%#*}
		# shorter training than the README's (the commands are what is checked, not the model)
		cmd=$(sed -E 's/--steps [0-9]+/--steps 40/; s/--eval-every [0-9]+/--eval-every 20/' <<<"$cmd")
		next=${lines[i + 1]:-}
		side=
		# the second terminal: started while this command runs, tried until it answers
		if [[ $next == *"# in another shell"* ]]; then
			printf '( for i in $(seq 60); do sleep 1; %s >>%q 2>&1 && exit 0; done; exit 1 ) & side=$!\n' "${next%%#*}" "$d/side.log"
			side=1
		fi
		printf 'echo "+ %s"\n%s\n' "${cmd//\"/\\\"}" "$cmd"
		[ -n "$side" ] && echo 'wait $side || { echo "FAIL: the command run in another shell never succeeded"; cat '"$(printf %q "$d/side.log")"'; exit 1; }'
	done
} >"$script"
bash "$script" >"$d/out" 2>&1 || { tail -n 40 "$d/out"; echo "(script: $script)"; cat "$script"; fail "a command of the README's walkthrough failed"; }

# what the walkthrough promises
for f in "$d/data/train/manifest" "$d/data/heldout/manifest" "$d/runs/mine/plot.png" "$d/runs/mine/model.safetensors" \
	"$d/data/images/manifest" "$d/runs/images/model.safetensors"; do
	[ -s "$f" ] || { tail -n 30 "$d/out"; fail "the walkthrough made no $f"; }
done
grep -q 'text->video' "$d/out" || fail "the video evaluation printed no text->video row"
grep -q 'text->image' "$d/out" || { tail -n 30 "$d/out"; fail "the image evaluation does not say text->image"; }
grep -q 'ring\|fill\|slots' "$d/side.log" || { cat "$d/side.log"; fail "ringstat printed nothing about the ring"; }
echo "pass: the README's own-data walkthrough runs as written ($(grep -c '^+ ' "$d/out") commands)"
