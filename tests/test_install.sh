#!/usr/bin/env bash
# `make install DESTDIR=...` gives working programs: every one carries the avclip- prefix (no
# bare `eval`, which the shell builtin shadows), plot is among them, the example environment
# file is valid shell, the units name the installed programs; and the installed launcher runs
# the demo job (synth -> prep -> launch -> eval -> plot, shortened) with the installed trainer,
# loaderd and ringctl, from a directory outside the source tree.
set -u
. tests/job_testlib.sh
jt_need tools/launch.sh tools/synth tools/prep trainer/trainer loaderd/loaderd tools/ringctl tools/eval tools/plot
jt_tmp install
tmp=$JT_TMP
dest=$tmp/root
# a make of its own: not the jobserver of a `make test` that runs this script; under make test-san
# (RING_SAN) with its sanitizer, since the build tree holds sanitized objects
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s install DESTDIR="$dest" BUILD="$BUILD" SAN="${RING_SAN:-}" \
	>"$tmp/install.log" 2>&1 || fail "make install: $(tail -n 5 "$tmp/install.log")"
bin=$dest/usr/local/bin
for p in launch trainer loaderd ringctl ringstat prep synth eval clipdump plot export; do
	[ -x "$bin/avclip-$p" ] || fail "avclip-$p is not installed"
done
others=$(ls "$bin" | grep -v '^avclip-')
[ -z "$others" ] || fail "installed without the prefix: $others"

env_file=$dest/usr/local/etc/avclip/avclip.env
bash -n "$env_file" || fail "the example environment file is not valid shell"
args=$(set -a && . "$env_file" 2>&1 && echo "$AVCLIP_TRAINER_ARGS") || fail "sourcing the environment file failed: $args"
[[ $args == "--model vit-b16 "*"--ckpt-every 1000" ]] || fail "AVCLIP_TRAINER_ARGS reads as '$args'"
units=$dest/usr/local/lib/systemd/system
grep -q "ExecStart=/usr/local/bin/avclip-trainer " "$units/avclip-trainer@.service" || fail "the trainer unit does not run avclip-trainer"
grep -q "ExecStart=/usr/local/bin/avclip-loaderd " "$units/avclip-loaderd@.service" || fail "the loader unit does not run avclip-loaderd"
grep -q "/usr/local/bin/avclip-ringctl create" "$units/avclip-ring.service" || fail "the ring unit does not run avclip-ringctl"

# the demo job with the installed programs only, from outside the tree
cd "$tmp" || exit 1
export PATH=/usr/bin:/bin
"$bin/avclip-synth" --out src --videos 2 --heldout 1 --minutes 0.5 --size 96x64 --scene-seed 5 >synth.log 2>&1 || fail "avclip-synth"
"$bin/avclip-prep" --annotations src/train.csv --video-root src/videos --out data --short-side 64 --chunk-sec 10 \
	--train-bpe 600 >prep.log 2>&1 || fail "avclip-prep: $(tail -n 3 prep.log)"
"$bin/avclip-prep" --annotations src/heldout.csv --video-root src/videos --out heldout --short-side 64 --chunk-sec 10 \
	--bpe data/bpe_merges.txt >>prep.log 2>&1 || fail "avclip-prep heldout: $(tail -n 3 prep.log)"
"$bin/avclip-launch" 1 --manifest data/manifest --run-dir runs/demo --loaders-per-node 2 -- --model tiny \
	--loss fastclip-v3 --batch-size 8 --steps 12 --eval-manifest heldout/manifest --eval-every 6 \
	--eval-match caption >launch.out 2>&1 || fail "avclip-launch: $(tail -n 8 launch.out)"
grep -q "watch the ring: $bin/avclip-ringstat --run-dir" launch.out || fail "the launcher did not use its installed siblings: $(cat launch.out)"
grep -q "^.*loaderd\[" runs/demo/logs/loaderd-0.log || fail "no loaderd ran: $(head -n 3 runs/demo/logs/loaderd-0.log)"
grep -q "finished at step 12 of 12" launch.out || fail "the demo job did not finish: $(tail -n 5 launch.out)"
"$bin/avclip-eval" --ckpt runs/demo --manifest heldout/manifest --match caption --quiet >eval.out 2>&1 || fail "avclip-eval: $(cat eval.out)"
"$bin/avclip-plot" runs/demo >plot.out 2>&1 && [ -s runs/demo/plot.png ] || fail "avclip-plot: $(cat plot.out)"
"$bin/avclip-ringstat" --run-dir runs/demo >/dev/null 2>&1 && fail "ringstat found a ring after the job ended"
echo "ok: $(ls "$bin" | wc -l) programs installed with one prefix; the installed launcher ran the demo job to step 12"
